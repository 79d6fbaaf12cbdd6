/**
 * After a parent-hash mismatch: the highest stored header the chain still agrees with. Stored
 * headers cover the reorg window (finality depth + margin) and each batch's last block; a reorg
 * deeper than what is stored cannot be repaired automatically and is refused.
 */
import type { Queryable } from '../../shared/db/client.js';
import * as blocks from '../../shared/db/tables/blocks.js';
import { hexToNumber, type BlockHeader, type RpcBlockHeader } from '../decode/chainTypes.js';
import type { RpcClient } from './rpcClient.js';

const PAGE = 32;

export class DeepReorgError extends Error {
  constructor(belowBlock: number) {
    super(`reorg reaches below every stored header (≤ ${belowBlock}): beyond the reorg window, refusing to repair`);
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

export async function findCommonAncestor(db: Queryable, rpc: RpcClient, chainId: number, fromBlock: number): Promise<BlockHeader> {
  let upTo = fromBlock;
  for (;;) {
    const stored = await blocks.listUpTo(db, chainId, upTo, PAGE);
    if (stored.length === 0) throw new DeepReorgError(fromBlock);
    const onChain = await chainHashes(
      rpc,
      stored.map((b) => b.number),
    );
    const match = stored.findIndex((b, i) => b.hash === onChain[i]);
    if (match >= 0) return stored[match]!;
    upTo = stored[stored.length - 1]!.number - 1;
  }
}
