import { z } from 'zod';

/**
 * The outbox contract between the indexer (writer, indexer/persist/outbox.ts) and the webhook
 * dispatcher (reader, webhooks/chainEvents.ts): the event types, the payload schema of each, and the
 * NOTIFY channel. Both sides use this module and nothing else, so a payload the indexer can build is
 * one the dispatcher can parse. The rows themselves are written by shared/db/tables/outboxEvents.ts.
 *
 * Addresses and hashes are read in lower case. Defaults and optional fields keep payloads written by
 * earlier indexers readable; the writer always writes every field (it is typed by the output).
 */

/** The channel the indexer notifies (payload: the chain id) when outbox events commit. */
export const OUTBOX_CHANNEL = 'opscan_outbox';

const address = z
  .string()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'not a 20-byte hex address')
  .transform((s) => s.toLowerCase());
const hash = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'not a 32-byte hex hash')
  .transform((s) => s.toLowerCase());
const blockNumber = z.coerce.number().int().nonnegative();
/**
 * A reorg's last kept block: -1 when nothing is kept, as when `npm start` finds rows of the previous
 * run's demo chain (a new chain each start) and rolls them all back.
 */
const keptBlockNumber = z.coerce.number().int().min(-1);
const position = z.number().int().nonnegative();

const userOperationPayload = z.object({
  userOpHash: hash,
  sender: address,
  paymaster: address.nullable(),
  bundler: address,
  beneficiary: address.nullable().optional(),
  /** The factory that deployed the sender (on every op of such an account, when the indexer knows it). */
  factory: address.nullable().optional(),
  /** Decoded execute/executeBatch call targets. */
  targets: z.array(address).default([]),
  /** Senders and recipients of the op's token and native transfers (zero address left out). */
  transferParties: z.array(address).default([]),
  blockNumber,
  blockHash: hash,
  transactionHash: hash,
  bundleIndex: position,
  logIndex: position,
});

const accountDeployedPayload = z.object({
  userOpHash: hash,
  account: address,
  factory: address,
  paymaster: address.nullable(),
  blockNumber,
  blockHash: hash,
  transactionHash: hash,
  logIndex: position,
});

const reorgPayload = z.object({
  commonAncestor: keptBlockNumber,
  removedFromBlock: blockNumber,
  removedUserOpHashes: z.array(hash).default([]),
  removedAccounts: z.array(address).default([]),
  /** Blocks the indexer held final (deeper than the network's finality depth) left the chain. */
  beyondFinality: z.boolean().default(false),
});

const payloadSchemas = {
  user_operation: userOperationPayload,
  account_deployed: accountDeployedPayload,
  reorg: reorgPayload,
} as const;

export type OutboxEventType = keyof typeof payloadSchemas;
export const OUTBOX_EVENT_TYPES = Object.keys(payloadSchemas) as OutboxEventType[];

/** The payload of an event type, as the writer builds it and the reader gets it back. */
export type OutboxPayload<T extends OutboxEventType> = z.output<(typeof payloadSchemas)[T]>;

/** An event with its payload, discriminated by `type`. */
export type OutboxEventOf<T extends OutboxEventType = OutboxEventType> = { [K in T]: { type: K; payload: OutboxPayload<K> } }[T];

/** What the indexer inserts: the event, the block it belongs to (finality) and its op, if any. */
export type NewOutboxEvent = OutboxEventOf & { blockNumber: number; userOpHash: string | null };

export type OutboxParseResult = { ok: true; event: OutboxEventOf } | { ok: false; reason: string };

/**
 * Parses a stored outbox row's type and payload. A row that does not fit the contract (an unknown
 * type, a payload missing a field or with a malformed one) is answered with the reason, never thrown:
 * the dispatcher dead-letters it and moves on.
 */
export function parseOutboxPayload(type: string, payload: unknown): OutboxParseResult {
  if (!Object.hasOwn(payloadSchemas, type)) return { ok: false, reason: `unknown event type ${JSON.stringify(type)}` };
  const known = type as OutboxEventType;
  const parsed = payloadSchemas[known].safeParse(payload);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(payload)'}: ${i.message}`);
    return { ok: false, reason: `${known} payload: ${issues.join('; ')}` };
  }
  return { ok: true, event: { type: known, payload: parsed.data } as OutboxEventOf };
}
