/**
 * What bundles earned, read from the chain itself and not from the indexer's decoding: every
 * UserOperationEvent and BeforeExecution log (`eth_getLogs`, topics hashed here by viem), every
 * bundle transaction's receipt (fee = gasUsed × effectiveGasPrice; the devnet has no L1 fee) and
 * block time. The tests compare opscan's bundles, bundler days and daily profit with it.
 */
import { expect } from 'chai';
import { decodeAbiParameters, toEventSelector } from 'viem';
import type { Queryable } from '../../../shared/db/client.js';
import type { Rpc } from '../../../devnet/rpc.js';

const USER_OPERATION_EVENT = toEventSelector('UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)');
const BEFORE_EXECUTION = toEventSelector('BeforeExecution()');

export type TxEconomics = { txHash: string; bundler: string; day: number; bundles: number; revenue: bigint; fee: bigint };

type Log = { transactionHash: string; blockNumber: string; topics: string[]; data: string };

export async function economicsOnChain(rpc: Rpc): Promise<Map<string, TxEconomics>> {
  const logs = await rpc.call<Log[]>('eth_getLogs', [
    { fromBlock: '0x0', toBlock: 'latest', topics: [[USER_OPERATION_EVENT, BEFORE_EXECUTION]] },
  ]);
  const txHashes = [...new Set(logs.map((l) => l.transactionHash.toLowerCase()))];
  const receipts = await rpc.batch<{ from: string; gasUsed: string; effectiveGasPrice: string; blockNumber: string }>(
    txHashes.map((h) => ['eth_getTransactionReceipt', [h]]),
  );
  const blockNumbers = [...new Set(receipts.map((r) => r.blockNumber))];
  const blocks = await rpc.batch<{ timestamp: string }>(blockNumbers.map((n) => ['eth_getBlockByNumber', [n, false]]));
  const times = new Map(blockNumbers.map((n, i) => [n, Number(blocks[i]!.timestamp)]));

  const txs = new Map<string, TxEconomics>();
  txHashes.forEach((txHash, i) => {
    const r = receipts[i]!;
    txs.set(txHash, {
      txHash,
      bundler: r.from.toLowerCase(),
      day: Math.floor(times.get(r.blockNumber)! / 86400),
      bundles: 0,
      revenue: 0n,
      fee: BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice),
    });
  });
  for (const log of logs) {
    const tx = txs.get(log.transactionHash.toLowerCase())!;
    if (log.topics[0] === BEFORE_EXECUTION) tx.bundles++;
    else {
      const [, , actualGasCost] = decodeAbiParameters(
        [{ type: 'uint256' }, { type: 'bool' }, { type: 'uint256' }, { type: 'uint256' }],
        log.data as `0x${string}`,
      );
      tx.revenue += actualGasCost;
    }
  }
  return txs;
}

type Sums = { bundles: number; revenue: bigint; fees: bigint };

/** Per `bundler:day`: its bundles, revenue and fees, as bundler_days must hold them. */
export function bundlerDaysOf(txs: Map<string, TxEconomics>): Map<string, Sums> {
  const days = new Map<string, Sums>();
  for (const tx of txs.values()) {
    const key = `${tx.bundler}:${tx.day}`;
    const d = days.get(key) ?? { bundles: 0, revenue: 0n, fees: 0n };
    days.set(key, { bundles: d.bundles + tx.bundles, revenue: d.revenue + tx.revenue, fees: d.fees + tx.fee });
  }
  return days;
}

/** The stored per-bundler and per-day figures equal the chain's. */
export async function expectStoredEconomicsMatchChain(db: Queryable, chainId: number, rpc: Rpc): Promise<void> {
  const txs = await economicsOnChain(rpc);
  const { rows } = await db.query<{ bundler: string; day: number; bundles: string; revenue: string; fees: string }>(
    `select '0x' || encode(bundler, 'hex') as bundler, day, bundles::text, revenue::text, fees::text
     from bundler_days where chain_id = $1`,
    [chainId],
  );
  const stored = new Map(
    rows.map((r) => [`${r.bundler}:${r.day}`, { bundles: Number(r.bundles), revenue: BigInt(r.revenue), fees: BigInt(r.fees) }]),
  );
  expect(stored, 'bundler_days').to.deep.equal(bundlerDaysOf(txs));

  const fees = new Map<number, bigint>();
  for (const tx of txs.values()) fees.set(tx.day, (fees.get(tx.day) ?? 0n) + tx.fee);
  const { rows: days } = await db.query<{ day: number; bundle_fees: string }>(
    `select day, bundle_fees::text from daily_stats where chain_id = $1`,
    [chainId],
  );
  expect(new Map(days.map((d) => [d.day, BigInt(d.bundle_fees)])), 'daily_stats.bundle_fees').to.deep.equal(fees);
}
