/**
 * EIP-7702 senders: EOAs that run delegated account code. A bundle can show it three ways — the
 * transaction (type 0x4) carries an authorization signed by the op's sender, the op's initCode is
 * the v0.8+ `0x7702` marker (the EntryPoint initialises the delegated code), or v0.9 emits
 * EIP7702AccountInitialized. A delegation made in an earlier transaction leaves no trace in a
 * later op: the account row keeps the flag once one op showed it.
 * @see https://eips.ethereum.org/EIPS/eip-7702
 */
import { Signature, verifyAuthorization } from 'ethers';
import type { EntryPointVersion } from '../../shared/networks.js';
import type { RpcTransaction } from './chainTypes.js';
import { ZERO_ADDRESS } from '../../shared/chain/constants.js';

/** initCode's first 20 bytes when the sender is a 7702 account (INITCODE_EIP7702_MARKER, v0.8+). */
export const INITCODE_EIP7702_MARKER = `0x7702${'0'.repeat(36)}`;

/**
 * The EntryPoint's test: initCode of 2 bytes or more whose first 20 bytes, read with calldataload
 * (zero past the end), are the marker. So a bare `0x7702` is a 7702 initCode too: viem and
 * permissionless send exactly that (factory "0x7702", no factory data).
 */
export function hasEip7702InitCode(version: EntryPointVersion, initCode: string | null): boolean {
  if (version === 'v0.6' || version === 'v0.7' || !initCode || initCode.length < 6) return false;
  return `0x${initCode.slice(2, 42).padEnd(40, '0')}`.toLowerCase() === INITCODE_EIP7702_MARKER;
}

/**
 * The accounts this transaction's authorization list delegates to code on `chainId`: each
 * authority is recovered from its signature (the list names only the delegate). Authorizations for
 * another chain, revocations (delegate = zero address) and unrecoverable signatures are skipped; a
 * stale nonce cannot be seen without state, but an op whose sender validated in this transaction
 * is an account, so the delegation took effect.
 */
export function delegatedAuthorities(tx: RpcTransaction, chainId: number): Set<string> {
  const authorities = new Set<string>();
  for (const a of tx.authorizationList ?? []) {
    const authChain = BigInt(a.chainId);
    if ((authChain !== 0n && authChain !== BigInt(chainId)) || a.address.toLowerCase() === ZERO_ADDRESS) continue;
    try {
      const signature = Signature.from({ r: a.r, s: a.s, yParity: Number(a.yParity) === 1 ? 1 : 0 });
      authorities.add(verifyAuthorization({ address: a.address, nonce: BigInt(a.nonce), chainId: authChain }, signature).toLowerCase());
    } catch {
      // A malformed signature delegates nothing.
    }
  }
  return authorities;
}
