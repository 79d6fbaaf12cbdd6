/**
 * Decodes everything fetched for one block range into the rows of one persisted batch. Pure: no
 * I/O, so it is unit-tested on recorded or constructed data and reusable by the benchmark.
 */
import type { EntryPointVersion } from '../../shared/networks.js';
import type { TraceMode } from '../tuning.js';
import { TOPICS, dataWord, wordToAddress, wordToBigInt } from './abi.js';
import { hexToNumber, type RawRange, type RpcLog } from './chainTypes.js';
import { emptyBatch, type DecodedBatch, type DecodedDeposit, type DepositEvent } from './decodedBatch.js';
import { decodeTransaction } from './decodeTransaction.js';
import type { TokenStandard } from './transfers.js';

const DEPOSIT_EVENTS = new Map<string, DepositEvent>([
  [TOPICS.deposited, 'Deposited'],
  [TOPICS.withdrawn, 'Withdrawn'],
  [TOPICS.stakeLocked, 'StakeLocked'],
  [TOPICS.stakeUnlocked, 'StakeUnlocked'],
  [TOPICS.stakeWithdrawn, 'StakeWithdrawn'],
]);

/** StakeManager events: in bundles (account prefunds) and outside them (paymaster top-ups). */
function toDeposit(log: RpcLog): DecodedDeposit | null {
  const event = DEPOSIT_EVENTS.get(log.topics[0] ?? '');
  if (!event || !log.topics[1]) return null;
  const word = (i: number): bigint => wordToBigInt(dataWord(log.data, i));
  const amount = event === 'Withdrawn' || event === 'StakeWithdrawn' ? word(1) : event === 'StakeLocked' ? word(0) : null;
  return {
    blockNumber: hexToNumber(log.blockNumber),
    logIndex: hexToNumber(log.logIndex),
    txHash: log.transactionHash.toLowerCase(),
    entryPoint: log.address.toLowerCase(),
    account: wordToAddress(log.topics[1]),
    event,
    amount,
    totalDeposit: event === 'Deposited' ? word(0) : null,
  };
}

export function decodeRange(raw: RawRange, entryPoints: Map<string, EntryPointVersion>, traces: TraceMode): DecodedBatch {
  const batch = emptyBatch(raw.chainId, raw.fromBlock, raw.toBlock, raw.headers);
  const ctx = { chainId: raw.chainId, entryPoints, traces };
  for (const tx of raw.bundleTxs) {
    const d = decodeTransaction(tx, ctx);
    batch.bundleTxs.push(d.bundleTx);
    batch.bundles.push(...d.bundles);
    batch.userOps.push(...d.userOps);
    batch.logs.push(...d.logs);
    batch.transfers.push(...d.transfers);
    batch.traces.push(...d.traces);
    batch.addressTxs.push(...d.addressTxs);
  }
  if (traces === 'all' && !raw.tracesSupported) {
    batch.traces = batch.userOps.map((o) => ({ userOpHash: o.userOpHash, status: 'unavailable', trace: null }));
  }
  for (const log of raw.entryPointLogs) {
    const deposit = toDeposit(log);
    if (deposit) batch.deposits.push(deposit);
  }
  const tokens = new Map<string, TokenStandard>();
  for (const t of batch.transfers) if (t.token && t.standard !== 'NATIVE') tokens.set(t.token, t.standard);
  batch.tokens = [...tokens].map(([address, standard]) => ({ address, standard }));
  return batch;
}
