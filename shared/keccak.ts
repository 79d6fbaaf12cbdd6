import { keccak256 as javascriptKeccak256 } from 'ethers';
import { createKeccak, type IHasher } from 'hash-wasm';

/**
 * keccak-256 in WebAssembly: ethers' JavaScript keccak took 150–240 µs per KB of calldata here
 * (most of the cost of reading a multicall's bundles), this one about 10. It compiles
 * asynchronously at startup (a top-level await would make this module async for every importer);
 * until then, or where WebAssembly is unavailable, ethers' gives the same hashes.
 */
let wasmKeccak: IHasher | null = null;
/** Settles when the WebAssembly keccak is in use (or known unavailable). */
export const wasmKeccakReady: Promise<void> = createKeccak(256)
  .then((hasher) => void (wasmKeccak = hasher))
  .catch(() => undefined);

/** keccak-256 of `bytes`, as bytes. */
export function keccak256Bytes(bytes: Uint8Array): Uint8Array {
  if (!wasmKeccak) return Buffer.from(javascriptKeccak256(bytes).slice(2), 'hex');
  wasmKeccak.init();
  wasmKeccak.update(bytes);
  return wasmKeccak.digest('binary');
}

/** keccak-256 of 0x-hex bytes, as 0x-hex. */
export function keccak256(hex: string): string {
  return `0x${Buffer.from(keccak256Bytes(Buffer.from(hex.slice(2), 'hex'))).toString('hex')}`;
}
