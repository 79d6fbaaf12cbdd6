/**
 * The net under the rule for text from the chain (shared/chainText.ts): when PostgreSQL still
 * refuses a batch for its content, the batch is written without its chain text, then each text is
 * put back on its own, inside the same transaction, behind a savepoint. A text refused again stays
 * out (its field is null) and is reported with the contract, block and field; everything else of
 * the batch is stored, and the network moves on.
 */
import type { Queryable } from '../../shared/db/client.js';
import * as tokens from '../../shared/db/tables/tokens.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import * as userOpTraces from '../../shared/db/tables/userOpTraces.js';
import type { DecodedBatch } from '../decode/decodedBatch.js';

/** A text of the chain PostgreSQL refused: stored as null. */
export type RefusedText = {
  /** The token, or the op's sender. */
  contract: string;
  blockNumber: number;
  /** `tokens.name`, `tokens.symbol`, `user_ops.revert_message` or `user_op_traces.trace`. */
  field: string;
  userOpHash: string | null;
  reason: string;
};

/**
 * Whether `err` is PostgreSQL refusing a value for what it holds: a data exception (class 22: bad
 * encoding, a string too long), an integrity rule other than a duplicate key (class 23: a check), a
 * program limit (class 54: an index row too large).
 */
export function isContentRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || code === '23505') return false;
  return code.startsWith('22') || code.startsWith('23') || code.startsWith('54');
}

type TextWrite = Omit<RefusedText, 'reason'> & { write: (tx: Queryable) => Promise<void> };

/** `batch` without its chain text, and the writes that put each text back. */
export function chainTextApart(batch: DecodedBatch): { stripped: DecodedBatch; writes: TextWrite[] } {
  const chainId = batch.chainId;
  const writes: TextWrite[] = [];
  const firstBlockOf = (token: string): number => batch.transfers.find((t) => t.token === token)?.blockNumber ?? batch.fromBlock;
  for (const t of batch.tokenMetadata) {
    for (const field of ['name', 'symbol'] as const) {
      const text = t[field];
      if (text === null) continue;
      writes.push({
        contract: t.address,
        blockNumber: firstBlockOf(t.address),
        field: `tokens.${field}`,
        userOpHash: null,
        write: (tx) => tokens.setText(tx, chainId, t.address, field, text),
      });
    }
  }
  const opsByHash = new Map(batch.userOps.map((o) => [o.userOpHash, o]));
  for (const o of batch.userOps) {
    const message = o.revertMessage;
    if (message === null) continue;
    writes.push({
      contract: o.sender,
      blockNumber: o.blockNumber,
      field: 'user_ops.revert_message',
      userOpHash: o.userOpHash,
      write: (tx) => userOps.setRevertMessage(tx, chainId, o.userOpHash, message),
    });
  }
  for (const t of batch.traces) {
    const op = opsByHash.get(t.userOpHash);
    if (t.trace === null || !op) continue;
    const trace = t.trace;
    writes.push({
      contract: op.sender,
      blockNumber: op.blockNumber,
      field: 'user_op_traces.trace',
      userOpHash: t.userOpHash,
      write: (tx) => userOpTraces.setTrace(tx, chainId, t.userOpHash, trace),
    });
  }
  const stripped: DecodedBatch = {
    ...batch,
    tokenMetadata: batch.tokenMetadata.map((t) => ({ ...t, name: null, symbol: null })),
    userOps: batch.userOps.map((o) => (o.revertMessage === null ? o : { ...o, revertMessage: null })),
    traces: batch.traces.map((t) => (t.trace === null ? t : { ...t, status: 'unavailable', trace: null })),
  };
  return { stripped, writes };
}

/** Runs each write behind its own savepoint in `tx`; the refused ones are rolled back and returned. */
export async function putTextBack(tx: Queryable, writes: TextWrite[]): Promise<RefusedText[]> {
  const refused: RefusedText[] = [];
  for (const { write, ...where } of writes) {
    await tx.query('savepoint chain_text');
    try {
      await write(tx);
      await tx.query('release savepoint chain_text');
    } catch (err) {
      if (!isContentRefusal(err)) throw err;
      await tx.query('rollback to savepoint chain_text');
      refused.push({ ...where, reason: (err as Error).message });
    }
  }
  return refused;
}
