import type { GroundTruth } from '../../../devnet/index.js';
import { findNetworkByChainId } from '../../../shared/networks.js';
import { expectedUserOp, newestFirst, pick } from '../../server/support/expected.js';
import { callApi } from './apiLoad.js';

/**
 * Reads every user operation of the truth's network back through the web process's API
 * (getLatestUserOps, page by page, then getUserOp for a sample) and compares each with what the devnet's ground truth says it must
 * be, field by field (test/server/support/expected.ts). Answers the first difference, or null.
 */
export async function apiDifference(baseUrl: string, key: string, truth: GroundTruth): Promise<string | null> {
  const network = findNetworkByChainId(truth.chainId)!.name;
  const expected = [...truth.userOps].sort(newestFirst);
  const got: Array<Record<string, unknown>> = [];
  for (let skip = 0; skip < expected.length + 1; skip += 100) {
    const page = await getJson(baseUrl, key, `/v0/getLatestUserOps?network=${network}&first=100&skip=${skip}`);
    if (typeof page === 'string') return page;
    const ops = (page as { userOps: Array<Record<string, unknown>> }).userOps;
    got.push(...ops);
    if (ops.length < 100) break;
  }
  if (got.length !== expected.length) return `the API lists ${got.length} ops, the truth has ${expected.length}`;
  for (const [i, op] of expected.entries()) {
    const want = expectedUserOp(truth, op);
    const have = pick(got[i]!, want);
    if (JSON.stringify(have) !== JSON.stringify(want)) {
      return `op #${i} ${op.userOpHash}: API ${JSON.stringify(have)} ≠ truth ${JSON.stringify(want)}`;
    }
  }
  for (const op of expected.filter((_, i) => i % 25 === 0)) {
    const one = await getJson(baseUrl, key, `/v0/getUserOp?hash=${op.userOpHash}`);
    if (typeof one === 'string') return one;
    const [answer] = (one as { userOps: Array<Record<string, unknown>> }).userOps;
    const want = expectedUserOp(truth, op);
    if (!answer || JSON.stringify(pick(answer, want)) !== JSON.stringify(want))
      return `getUserOp ${op.userOpHash}: API ${answer ? JSON.stringify(pick(answer, want)) : 'nothing'} ≠ truth ${JSON.stringify(want)}`;
  }
  return null;
}

async function getJson(baseUrl: string, key: string, path: string): Promise<unknown> {
  const { answer, body } = await callApi(baseUrl, key, path);
  return answer.status === 200 ? body : `${path} answered ${answer.status} ${answer.error ?? ''}`;
}
