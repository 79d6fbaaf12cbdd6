/**
 * Explicit block production on anvil: switch automine off while the devnet builds blocks, send a
 * block's raw transactions in one batch, mine it at a chosen timestamp, read it back with its
 * receipts (two calls per block).
 */
import type { Rpc } from './rpc.js';

export type RpcLog = {
  address: string;
  topics: string[];
  data: string;
  logIndex: string;
  transactionHash: string;
  blockNumber: string;
};

export type RpcReceipt = {
  transactionHash: string;
  transactionIndex: string;
  from: string;
  to: string | null;
  status: string;
  gasUsed: string;
  effectiveGasPrice: string;
  contractAddress: string | null;
  logs: RpcLog[];
};

export type MinedBlock = {
  number: number;
  hash: string;
  timestamp: number;
  /** Wall-clock ms when evm_mine returned (block timestamps are whole seconds; freshness is timed from this). */
  minedAtMs: number;
  receipts: RpcReceipt[];
};

/** Runs `fn` with automine off, restoring automine afterwards (outside callers expect it on). */
export async function withManualMining<T>(rpc: Rpc, fn: () => Promise<T>): Promise<T> {
  await rpc.call('evm_setAutomine', [false]);
  try {
    return await fn();
  } finally {
    await rpc.call('evm_setAutomine', [true]);
  }
}

export async function headBlock(rpc: Rpc): Promise<{ number: number; hash: string; timestamp: number }> {
  const b = await rpc.call<{ number: string; hash: string; timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
  return { number: Number(b.number), hash: b.hash, timestamp: Number(b.timestamp) };
}

/** Sends signed transactions in one JSON-RPC batch; returns their hashes. */
export async function sendRawTransactions(rpc: Rpc, raws: string[]): Promise<string[]> {
  return rpc.batch<string>(raws.map((raw) => ['eth_sendRawTransaction', [raw]]));
}

/**
 * Mines one block holding everything pending, at `timestamp` (must exceed the parent's), and
 * checks that every transaction in `expectTxs` made it in (a dropped bundle would silently
 * corrupt the ground truth otherwise).
 */
export async function mineBlock(rpc: Rpc, timestamp: number, expectTxs: string[] = []): Promise<MinedBlock> {
  await rpc.call('evm_setNextBlockTimestamp', [timestamp]);
  await rpc.call('evm_mine');
  const minedAtMs = Date.now();
  const block = await rpc.call<{ number: string; hash: string; timestamp: string }>('eth_getBlockByNumber', ['latest', false]);
  const receipts = await rpc.call<RpcReceipt[]>('eth_getBlockReceipts', [block.number]);
  const included = new Set(receipts.map((r) => r.transactionHash));
  const missing = expectTxs.filter((h) => !included.has(h));
  if (missing.length > 0)
    throw new Error(`block ${Number(block.number)} is missing ${missing.length} transaction(s): ${missing.join(', ')}`);
  return { number: Number(block.number), hash: block.hash, timestamp: Number(block.timestamp), minedAtMs, receipts };
}
