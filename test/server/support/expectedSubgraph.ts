/**
 * What the subgraph-style GraphQL endpoint must answer, from the ground truth and the chain alone
 * (for test/server/graphql.test.ts and the published client's test).
 */
import type { GroundTruth, TruthAccount, TruthUserOp } from '../../../devnet/index.js';
import { ZERO_ADDRESS } from '../../../shared/chain/constants.js';

/** Newest first with graph-node's tie-break: the id (`<userOpHash>-<logIndex>`) in the same direction. */
export const newestFirstById = (a: TruthUserOp, b: TruthUserOp) => b.blockNumber - a.blockNumber || (b.userOpHash < a.userOpHash ? -1 : 1);

/** The subgraph's Account, as the client library's address-activity query selects it. */
export function expectedAccount(truth: GroundTruth, account: TruthAccount): Record<string, unknown> {
  return {
    id: account.address,
    address: account.address,
    blockNumber: String(account.blockNumber),
    blockTime: String(account.blockTime),
    factory: account.factory,
    paymaster: truth.userOps.find((o) => o.userOpHash === account.userOpHash)!.paymaster ?? ZERO_ADDRESS,
    transactionHash: account.transactionHash,
    userOpHash: account.userOpHash,
    userOpsCount: String(truth.userOps.filter((o) => o.sender === account.address).length),
  };
}

/** A block header as the chain's node answers it (what `_meta.block` must equal). */
export async function chainBlock(
  rpcUrl: string,
  number: number,
): Promise<{ number: number; hash: string; parentHash: string; timestamp: number }> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [`0x${number.toString(16)}`, false] }),
  });
  const { result } = (await res.json()) as { result: { hash: string; parentHash: string; timestamp: string } };
  return { number, hash: result.hash, parentHash: result.parentHash, timestamp: Number(result.timestamp) };
}
