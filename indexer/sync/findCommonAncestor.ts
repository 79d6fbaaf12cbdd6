/**
 * After a parent-hash mismatch: the highest block both the chain and the stored data hold. The
 * stored headers (the reorg window, each batch's last block) are compared first; below them, the
 * blocks that hold stored rows, by the block hash stored with their transactions. Rolling back to
 * the highest of those the chain still has removes the rows of blocks that left it and nothing
 * else, however deep the reorg: one deeper than the finality depth is repaired too (and reported
 * as such by the caller), so that no row of an orphaned block stays.
 */
import type { Queryable } from '../../shared/db/client.js';
import * as blocks from '../../shared/db/tables/blocks.js';
import * as bundleTransactions from '../../shared/db/tables/bundleTransactions.js';
import { hexToNumber, type RpcBlockHeader } from '../decode/chainTypes.js';
import type { RpcClient } from './rpcClient.js';

const PAGE = 32;

/** The chain holds none of the stored blocks: not a reorg of the indexed chain (another chain behind the URL). */
export class DeepReorgError extends Error {
  constructor(belowBlock: number) {
    super(`the chain holds no stored block at or below ${belowBlock}: it is not the indexed chain, refusing to repair`);
    this.name = 'DeepReorgError';
  }
}

/** The chain's hash at each height (null beyond its head, e.g. after a reorg to a shorter chain). */
export async function chainHashes(rpc: RpcClient, numbers: number[]): Promise<Array<string | null>> {
  const answers = await rpc.batch<RpcBlockHeader | null>(
    numbers.map((n) => ({ method: 'eth_getBlockByNumber', params: [`0x${n.toString(16)}`, false] })),
    (b, r) => b === null || (typeof b?.hash === 'string' && hexToNumber(b.number) === hexToNumber(String(r.params[0]))),
  );
  return answers.map((b) => b?.hash.toLowerCase() ?? null);
}

export type CommonAncestor = { number: number; hash: string };

export async function findCommonAncestor(db: Queryable, rpc: RpcClient, chainId: number, fromBlock: number): Promise<CommonAncestor> {
  const head = Number(await rpc.call<string>('eth_blockNumber', [], (h) => typeof h === 'string' && /^0x[0-9a-f]+$/i.test(h)));
  const firstAgreeing = async (candidates: CommonAncestor[]): Promise<CommonAncestor | null> => {
    const onChain = await chainHashes(
      rpc,
      candidates.map((c) => c.number),
    );
    for (const [i, c] of candidates.entries()) {
      // A node behind its own head (a replica of a load-balanced provider) says nothing about the
      // block: taking it for a mismatch would remove rows still on the chain.
      if (onChain[i] === null && c.number <= head) throw new Error(`the node answered no block ${c.number} below its head ${head}`);
      if (c.hash === onChain[i]) return { number: c.number, hash: c.hash };
    }
    return null;
  };
  let upTo = fromBlock;
  for (;;) {
    const stored = await blocks.listUpTo(db, chainId, upTo, PAGE);
    if (stored.length === 0) break;
    const match = await firstAgreeing(stored);
    if (match) return match;
    upTo = stored[stored.length - 1]!.number - 1;
  }
  // Below every stored header: a reorg deeper than the window.
  for (;;) {
    const withRows = await bundleTransactions.listBlocksUpTo(db, chainId, upTo, PAGE);
    if (withRows.length === 0) throw new DeepReorgError(fromBlock);
    const match = await firstAgreeing(withRows);
    if (match) return match;
    upTo = withRows[withRows.length - 1]!.number - 1;
  }
}
