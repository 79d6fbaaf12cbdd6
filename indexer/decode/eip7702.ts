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
import type { AuthorizationTx, RecoveredAuthorization, RpcTransaction } from './chainTypes.js';
import type { DelegationStatus, NewDelegation } from '../../shared/db/tables/delegations.js';
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
  for (const a of recoverAuthorizations(tx))
    if (a.authority && a.delegate && appliesToChain(a.chainId, chainId)) authorities.add(a.authority);
  return authorities;
}

/** secp256k1's group order halved: EIP-7702 refuses a signature whose s is above it (EIP-2). */
const HALF_CURVE_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

/**
 * Each tuple of the transaction's authorization list with its authority recovered from the
 * signature: null when none recovers, or when s or yParity is out of the range EIP-7702 accepts.
 */
export function recoverAuthorizations(tx: RpcTransaction): RecoveredAuthorization[] {
  return (tx.authorizationList ?? []).map((a) => {
    const chainId = BigInt(a.chainId);
    const nonce = BigInt(a.nonce);
    const delegate = a.address.toLowerCase() === ZERO_ADDRESS ? null : a.address.toLowerCase();
    let authority: string | null = null;
    const yParity = BigInt(a.yParity);
    if ((yParity === 0n || yParity === 1n) && BigInt(a.s) <= HALF_CURVE_ORDER) {
      try {
        const signature = Signature.from({ r: a.r, s: a.s, yParity: yParity === 1n ? 1 : 0 });
        authority = verifyAuthorization({ address: a.address, nonce, chainId }, signature).toLowerCase();
      } catch {
        // A malformed signature names no authority.
      }
    }
    return { chainId, delegate, nonce, authority };
  });
}

/** Whether the chain `chainId` applies an authorization for `authChainId` (0: any chain). */
export const appliesToChain = (authChainId: bigint, chainId: number): boolean => authChainId === 0n || authChainId === BigInt(chainId);

/** An authorization whose nonce decides whether it took effect: its authority's nonce before the block is read. */
export const needsNonce = (a: RecoveredAuthorization, chainId: number): a is RecoveredAuthorization & { authority: string } =>
  a.authority !== null && appliesToChain(a.chainId, chainId);

export const nonceKey = (blockNumber: number, authority: string): string => `${blockNumber}:${authority}`;

/**
 * The delegations of `txs` (in chain order), each marked with whether it took effect. Within a
 * block the authority's nonce starts at its nonce before the block (`nonces`, read from the node)
 * and moves as the chain moves it: a transaction it sends sets it to that transaction's nonce + 1
 * before the list is applied, and each effective authorization adds one. Transactions the indexer
 * does not read (under INDEXER_DELEGATIONS=ops, the authority's own plain transactions in the same
 * block) are not seen: the one case this order can misjudge.
 */
export function decodeDelegations(txs: AuthorizationTx[], nonces: Map<string, bigint | null>, chainId: number): NewDelegation[] {
  const out: NewDelegation[] = [];
  let block = -1;
  let current = new Map<string, bigint | null>();
  for (const tx of txs) {
    if (tx.blockNumber !== block) {
      block = tx.blockNumber;
      current = new Map();
    }
    const nonceOf = (authority: string): bigint | null => {
      if (!current.has(authority)) current.set(authority, nonces.get(nonceKey(block, authority)) ?? null);
      return current.get(authority)!;
    };
    if (nonces.has(nonceKey(block, tx.from))) current.set(tx.from, tx.nonce + 1n);
    tx.authorizations.forEach((a, authIndex) => {
      let status: DelegationStatus;
      if (!appliesToChain(a.chainId, chainId)) status = 'wrong_chain_id';
      else if (a.authority === null) status = 'invalid_signature';
      else {
        const nonce = nonceOf(a.authority);
        if (nonce === null) status = 'unverified';
        else if (nonce !== a.nonce) status = 'wrong_nonce';
        else {
          status = 'effective';
          current.set(a.authority, nonce + 1n);
        }
      }
      out.push({
        blockNumber: tx.blockNumber,
        txIndex: tx.txIndex,
        authIndex,
        txHash: tx.txHash,
        blockTime: tx.blockTime,
        authority: a.authority,
        delegate: a.delegate,
        authorizationChainId: a.chainId,
        authorizationNonce: a.nonce,
        viaUserOp: tx.viaUserOp,
        status,
      });
    });
  }
  return out;
}
