/**
 * The userOpHash an EntryPoint computes for an op, from its calldata: what proves that calldata
 * found without a trace is the calldata the EntryPoint executed (embeddedBundles.ts). v0.6 and
 * v0.7 hash the packed fields with the EntryPoint and chain id; v0.8 and v0.9 hash them as EIP-712
 * typed data; v0.9 leaves the paymaster signature and its length out of paymasterAndData. An op
 * whose hash depends on chain state (v0.8+ EIP-7702 init code: the delegate's address stands in
 * for the marker) has no hash here (null).
 * @see https://eips.ethereum.org/EIPS/eip-4337
 */
import { id } from 'ethers';
import { keccak256 } from '../../shared/keccak.js';
import type { EntryPointVersion } from '../../shared/networks.js';
import type { CalldataOp } from './entryPointDecoder.js';
import { hasEip7702InitCode } from './eip7702.js';

const PACKED_USEROP_TYPEHASH = id(
  'PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)',
);
const EIP712_DOMAIN_TYPEHASH = id('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)');
const ERC4337_NAME_HASH = id('ERC4337');
const VERSION_1_HASH = id('1');

/** ABI encoding of static values, each one 32-byte word (addresses, uints, bytes32 given as hex or bigint). */
const words = (...values: Array<string | bigint | number>): string =>
  `0x${values.map((v) => (typeof v === 'string' ? v.slice(2) : v.toString(16)).padStart(64, '0')).join('')}`;

/** paymasterAndData as v0.9 hashes it: without the paymaster signature and its length, magic kept. */
function paymasterAndDataHashed(op: CalldataOp): string {
  if (!op.paymasterSignature) return op.paymasterAndData;
  const signed = op.paymasterAndData;
  return signed.slice(0, signed.length - 20 - (op.paymasterSignature.length - 2)) + signed.slice(-16);
}

export function userOpHashOf(op: CalldataOp, version: EntryPointVersion, entryPoint: string, chainId: number): string | null {
  if (hasEip7702InitCode(version, op.initCode)) return null;
  const initCode = keccak256(op.initCode);
  const callData = keccak256(op.callData);
  if (version === 'v0.6') {
    const packed = words(
      op.sender,
      op.nonce,
      initCode,
      callData,
      op.callGasLimit,
      op.verificationGasLimit,
      op.preVerificationGas,
      op.maxFeePerGas,
      op.maxPriorityFeePerGas,
      keccak256(op.paymasterAndData),
    );
    return keccak256(words(keccak256(packed), entryPoint, chainId));
  }
  if (!op.accountGasLimits || !op.gasFees) return null;
  const fields = [
    op.sender,
    op.nonce,
    initCode,
    callData,
    op.accountGasLimits,
    op.preVerificationGas,
    op.gasFees,
    keccak256(paymasterAndDataHashed(op)),
  ];
  if (version === 'v0.7') return keccak256(words(keccak256(words(...fields)), entryPoint, chainId));
  const structHash = keccak256(words(PACKED_USEROP_TYPEHASH, ...fields));
  const domainSeparator = keccak256(words(EIP712_DOMAIN_TYPEHASH, ERC4337_NAME_HASH, VERSION_1_HASH, chainId, entryPoint));
  return keccak256(`0x1901${domainSeparator.slice(2)}${structHash.slice(2)}`);
}
