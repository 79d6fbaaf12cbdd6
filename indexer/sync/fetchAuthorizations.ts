/**
 * Fetches what a range's EIP-7702 delegations are decoded from (INDEXER_DELEGATIONS): the
 * transactions carrying an authorization list — the bundle transactions fetched anyway (ops), or
 * every type-4 transaction of the range's blocks, each block read whole (all) — and, for each
 * authority whose tuple names this chain and recovers, its nonce before the block: one
 * eth_getTransactionCount per authority and block, the one fact the transactions cannot give
 * (an authorization takes effect only at the authority's current nonce).
 */
import { hexToNumber, type AuthorizationTx, type BlockHeader, type RawBundleTx, type RpcTransaction } from '../decode/chainTypes.js';
import { needsNonce, nonceKey, recoverAuthorizations } from '../decode/eip7702.js';
import { InconsistentRangeError } from './fetchLogs.js';
import type { ChainSource } from './fetchRange.js';
import type { RpcRequest } from './rpcClient.js';

type FullBlock = { number: string; hash: string; timestamp: string; transactions: RpcTransaction[] };

/** Whole blocks asked for in one batch (a Base block is some 200 transactions: a batch stays a few MB). */
const BLOCKS_PER_BATCH = 20;

const hex = (n: number): string => `0x${n.toString(16)}`;

const isFullBlock = (b: unknown, r: RpcRequest): boolean => {
  const block = b as FullBlock | null;
  return (
    !!block &&
    typeof block.hash === 'string' &&
    Array.isArray(block.transactions) &&
    hexToNumber(block.number) === hexToNumber(String(r.params[0])) &&
    block.transactions.every((t) => typeof t === 'object' && t !== null)
  );
};

const isQuantity = (v: unknown): boolean => typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v);

function authorizationTx(tx: RpcTransaction, blockTime: number, viaUserOp: boolean): AuthorizationTx {
  return {
    txHash: tx.hash.toLowerCase(),
    blockNumber: hexToNumber(tx.blockNumber!),
    txIndex: hexToNumber(tx.transactionIndex!),
    blockTime,
    from: tx.from.toLowerCase(),
    nonce: BigInt(tx.nonce ?? 0),
    viaUserOp,
    authorizations: recoverAuthorizations(tx),
  };
}

/**
 * The range's type-4 transactions and the transactions their authorities sent in the same blocks
 * (each moves the authority's nonce), in chain order; every block checked against the hashes
 * already fetched for the range.
 */
async function blockAuthorizationTxs(
  source: Pick<ChainSource, 'rpc' | 'entryPoints'>,
  range: { fromBlock: number; toBlock: number },
  knownHashes: Map<number, string>,
  bundleTxHashes: Set<string>,
): Promise<AuthorizationTx[]> {
  const out: AuthorizationTx[] = [];
  for (let start = range.fromBlock; start <= range.toBlock; start += BLOCKS_PER_BATCH) {
    const end = Math.min(range.toBlock, start + BLOCKS_PER_BATCH - 1);
    const requests = Array.from({ length: end - start + 1 }, (_, i) => ({
      method: 'eth_getBlockByNumber',
      params: [hex(start + i), true],
    }));
    const blocks = await source.rpc.batch<FullBlock>(requests, isFullBlock);
    for (const block of blocks) {
      const number = hexToNumber(block.number);
      const known = knownHashes.get(number);
      if (known && known !== block.hash.toLowerCase())
        throw new InconsistentRangeError(`block ${number} changed while its range was fetched`);
      const time = hexToNumber(block.timestamp);
      const typed = block.transactions.filter((t) => (t.authorizationList?.length ?? 0) > 0);
      if (typed.length === 0) continue;
      const picked = typed.map((t) => authorizationTx(t, time, bundleTxHashes.has(t.hash.toLowerCase()) || isEntryPoint(source, t)));
      const authorities = new Set(picked.flatMap((t) => t.authorizations.flatMap((a) => (a.authority ? [a.authority] : []))));
      const senders = block.transactions
        .filter((t) => !t.authorizationList?.length && authorities.has(t.from.toLowerCase()))
        .map((t) => ({ ...authorizationTx(t, time, false), authorizations: [] }));
      out.push(...[...picked, ...senders].sort((a, b) => a.txIndex - b.txIndex));
    }
  }
  return out;
}

const isEntryPoint = (source: Pick<ChainSource, 'entryPoints'>, tx: RpcTransaction): boolean =>
  !!tx.to && source.entryPoints.has(tx.to.toLowerCase());

export async function fetchAuthorizations(
  source: Pick<ChainSource, 'rpc' | 'chainId' | 'entryPoints' | 'delegations'>,
  range: { fromBlock: number; toBlock: number; bundleTxs: RawBundleTx[]; headers: Map<number, BlockHeader> },
): Promise<{ authorizationTxs: AuthorizationTx[]; authorityNonces: Map<string, bigint | null> }> {
  const fromBundles = range.bundleTxs
    .filter((t) => (t.tx.authorizationList?.length ?? 0) > 0)
    .map((t) =>
      authorizationTx({ ...t.tx, blockNumber: t.receipt.blockNumber, transactionIndex: t.receipt.transactionIndex }, t.blockTime, true),
    );
  let txs = fromBundles;
  if (source.delegations === 'all') {
    const knownHashes = new Map([...range.headers.values()].map((h) => [h.number, h.hash]));
    for (const t of range.bundleTxs) knownHashes.set(hexToNumber(t.receipt.blockNumber), t.receipt.blockHash.toLowerCase());
    txs = await blockAuthorizationTxs(source, range, knownHashes, new Set(range.bundleTxs.map((t) => t.tx.hash.toLowerCase())));
  }
  const keys = new Map<string, { authority: string; blockNumber: number }>();
  for (const tx of txs)
    for (const a of tx.authorizations)
      if (needsNonce(a, source.chainId))
        keys.set(nonceKey(tx.blockNumber, a.authority), { authority: a.authority, blockNumber: tx.blockNumber });
  const authorityNonces = new Map<string, bigint | null>();
  if (keys.size === 0) return { authorizationTxs: txs, authorityNonces };
  const entries = [...keys];
  const settled = await source.rpc.batchSettled<string>(
    entries.map(([, k]) => ({ method: 'eth_getTransactionCount', params: [k.authority, hex(Math.max(0, k.blockNumber - 1))] })),
    isQuantity,
  );
  // An error left final by the client (the node pruned that block's state) leaves the authorizations unverified.
  settled.forEach((s, i) => authorityNonces.set(entries[i]![0], s.ok ? BigInt(s.value) : null));
  return { authorizationTxs: txs, authorityNonces };
}
