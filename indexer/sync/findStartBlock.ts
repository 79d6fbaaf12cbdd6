/**
 * The first block worth indexing when START_BLOCK_<NAME> is not set: the earliest block at which
 * any configured EntryPoint has code (binary search of eth_getCode). Needs historical state; a
 * node that cannot answer for old blocks makes us start at 0 (eth_getLogs still finds everything).
 */
import type { Logger } from '../../shared/log.js';
import type { RpcClient } from './rpcClient.js';

async function anyCodeAt(rpc: RpcClient, addresses: string[], block: number): Promise<boolean> {
  const codes = await rpc.batch<string>(
    addresses.map((a) => ({ method: 'eth_getCode', params: [a, `0x${block.toString(16)}`] })),
    (c) => typeof c === 'string',
  );
  return codes.some((c) => c !== '0x' && c !== '');
}

export async function findStartBlock(rpc: RpcClient, addresses: string[], head: number, log: Logger): Promise<number> {
  try {
    // Nothing deployed yet: everything to come is after the current head.
    if (!(await anyCodeAt(rpc, addresses, head))) return head;
    let lo = 0;
    let hi = head;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (await anyCodeAt(rpc, addresses, mid)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  } catch (err) {
    log.warn({ err }, 'cannot find the EntryPoints deployment block (no historical state?); starting at block 0');
    return 0;
  }
}
