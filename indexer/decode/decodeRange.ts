/**
 * Decodes everything fetched for one block range into the rows of one persisted batch. Pure: no
 * I/O, so it is unit-tested on recorded or constructed data and reusable by the benchmark.
 */
import type { EntryPointVersion } from '../../shared/networks.js';
import type { TraceMode } from '../tuning.js';
import { dataWord, wordToAddress, wordToBigInt } from './abi.js';
import { hexToNumber, type RawRange, type RpcLog } from './chainTypes.js';
import { emptyBatch, type DecodedBatch, type DecodedDeposit, type DecodedTransfer, type DepositEvent } from './decodedBatch.js';
import { decodeTransaction } from './decodeTransaction.js';
import { decodeDelegations } from './eip7702.js';
import { transfersOf, type TokenStandard } from './transfers.js';
import { TOPICS, ZERO_ADDRESS } from '../../shared/chain/constants.js';

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

/** The addresses the batch makes known: its ops' senders, paymasters and factories, its bundlers. */
function partiesOf(batch: DecodedBatch): Map<string, number> {
  const first = new Map<string, number>();
  const see = (address: string | null, block: number): void => {
    if (!address || address === ZERO_ADDRESS) return;
    const seen = first.get(address);
    if (seen === undefined || block < seen) first.set(address, block);
  };
  for (const o of batch.userOps) {
    see(o.sender, o.blockNumber);
    see(o.paymaster, o.blockNumber);
    see(o.factory, o.blockNumber);
  }
  for (const b of batch.bundles) see(b.bundler, b.blockNumber);
  return first;
}

/** INDEXER_TRANSFERS=known: who is known before the range, and how far back a new party's transfers count. */
export type KnownTransfers = {
  isKnown: (address: string) => boolean;
  /** INDEXER_TRANSFER_LOOKBACK_BLOCKS: a party of the range counts from lookbackBlocks before its first block. */
  lookbackBlocks: number;
};

/**
 * The transfers of plain transactions whose sender or receiver is known: known before the range,
 * or a party of the range itself from `lookbackBlocks` before the block it first appears in (the
 * rule the transfer backfill applies to the blocks before the range). Logs of bundle transactions
 * are left to decodeTransaction (which attributes them to their op).
 */
function plainTransfers(
  raw: RawRange,
  batch: DecodedBatch,
  parties: Map<string, number>,
  { isKnown, lookbackBlocks }: KnownTransfers,
): DecodedTransfer[] {
  const bundleTxs = new Set(batch.bundleTxs.map((t) => t.txHash));
  const known = (a: string, block: number): boolean => {
    const first = parties.get(a);
    return (first !== undefined && block >= first - lookbackBlocks) || isKnown(a);
  };
  const out: DecodedTransfer[] = [];
  for (const log of raw.tokenLogs ?? []) {
    const txHash = log.transactionHash.toLowerCase();
    if (bundleTxs.has(txHash)) continue;
    const blockNumber = hexToNumber(log.blockNumber);
    for (const t of transfersOf(log)) {
      if (!known(t.from, blockNumber) && !known(t.to, blockNumber)) continue;
      out.push({ ...t, txHash, blockNumber, blockTime: raw.blockTimes.get(blockNumber)!, userOpHash: null });
    }
  }
  return out;
}

/** `knownTransfers`: under INDEXER_TRANSFERS=known (absent under ops, where raw.tokenLogs is too). */
export function decodeRange(
  raw: RawRange,
  entryPoints: Map<string, EntryPointVersion>,
  traces: TraceMode,
  knownTransfers?: KnownTransfers,
): DecodedBatch {
  const batch = emptyBatch(raw.chainId, raw.fromBlock, raw.toBlock, raw.headers);
  const ctx = { chainId: raw.chainId, entryPoints, traces };
  for (const tx of raw.bundleTxs) {
    const d = decodeTransaction(tx, ctx);
    batch.bundleTxs.push(d.bundleTx);
    batch.bundles.push(...d.bundles);
    batch.userOps.push(...d.userOps);
    batch.transfers.push(...d.transfers);
    batch.traces.push(...d.traces);
    batch.addressTxs.push(...d.addressTxs);
    batch.moduleEvents.push(...d.moduleEvents);
  }
  if (traces === 'all' && !raw.tracesSupported) {
    batch.traces = batch.userOps.map((o) => ({ userOpHash: o.userOpHash, status: 'unavailable', trace: null }));
  }
  batch.delegations = decodeDelegations(raw.authorizationTxs ?? [], raw.authorityNonces ?? new Map<string, bigint | null>(), raw.chainId);
  for (const log of raw.entryPointLogs) {
    const deposit = toDeposit(log);
    if (deposit) batch.deposits.push(deposit);
  }
  const parties = partiesOf(batch);
  // The forward pass reads a party's later logs from this range on: the backfill reads those before it.
  batch.knownAddresses = [...parties].map(([address, firstBlock]) => ({
    address,
    firstBlock,
    backfillTo: knownTransfers ? firstBlock - 1 : null,
  }));
  if (knownTransfers) batch.transfers.push(...plainTransfers(raw, batch, parties, knownTransfers));
  const tokens = new Map<string, TokenStandard>();
  for (const t of batch.transfers) if (t.token && t.standard !== 'NATIVE') tokens.set(t.token, t.standard);
  batch.tokens = [...tokens].map(([address, standard]) => ({ address, standard }));
  return batch;
}
