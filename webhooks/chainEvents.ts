import type { OutboxEvent } from '../shared/db/tables/webhookOutboxCursors.js';
import type { WebhookFilter } from '../shared/models/webhook.js';
import { parseOutboxPayload, type OutboxPayload } from '../shared/outboxEvents.js';
import { ZERO_ADDRESS } from '../shared/chain/constants.js';

/**
 * The outbox events the indexer writes, parsed with the contract both share (shared/outboxEvents.ts),
 * and which (filter, address) pairs each one matches. Pure: no I/O. Addresses are compared in lower case.
 */

type Base = { outboxId: number; chainId: number; recordedAt: Date };
export type UserOperationEvent = Base & { type: 'user_operation' } & OutboxPayload<'user_operation'>;
export type AccountDeployedEvent = Base & { type: 'account_deployed' } & OutboxPayload<'account_deployed'>;
export type ReorgEvent = Base & { type: 'reorg' } & OutboxPayload<'reorg'>;
export type ChainEvent = UserOperationEvent | AccountDeployedEvent | ReorgEvent;

export type ParsedRow = { ok: true; event: ChainEvent } | { ok: false; reason: string };

/** Parses an outbox row; a row that does not fit the contract comes back with the reason. */
export function parseOutboxEvent(row: OutboxEvent): ParsedRow {
  const parsed = parseOutboxPayload(row.type, row.payload);
  if (!parsed.ok) return parsed;
  const base = { outboxId: row.id, chainId: row.chainId, recordedAt: row.createdAt };
  const { event } = parsed;
  switch (event.type) {
    case 'user_operation':
      return { ok: true, event: { ...base, type: event.type, ...event.payload } };
    case 'account_deployed':
      return { ok: true, event: { ...base, type: event.type, ...event.payload } };
    case 'reorg':
      return { ok: true, event: { ...base, type: event.type, ...event.payload } };
  }
}

export type MatchKey = { filter: WebhookFilter; address: string };

/**
 * The (filter, address) pairs an event matches:
 * - ADDRESS: the op's sender, a decoded call target, or a party to a token transfer in the op;
 *   for a deployment, the deployed account.
 * - FACTORY: a deployment by the factory, and every op of an account it deployed.
 * - BUNDLER: the sender of the bundle transaction.
 * - PAYMASTER: the op's paymaster.
 * `senderFactory` is accounts.factory of the op's sender, for indexers that set `factory` only on
 * the deploying op. Reorg notices go to webhooks that received the removed ops, not by filter.
 */
export function matchKeysOf(event: ChainEvent, senderFactory: string | null = null): MatchKey[] {
  const keys: MatchKey[] = [];
  const add = (filter: WebhookFilter, address: string | null | undefined) => {
    if (address && address !== ZERO_ADDRESS) keys.push({ filter, address });
  };
  switch (event.type) {
    case 'user_operation':
      for (const a of new Set([event.sender, ...event.targets, ...event.transferParties])) add('ADDRESS', a);
      add('PAYMASTER', event.paymaster);
      add('BUNDLER', event.bundler);
      add('FACTORY', event.factory ?? senderFactory);
      break;
    case 'account_deployed':
      add('FACTORY', event.factory);
      add('ADDRESS', event.account);
      break;
    case 'reorg':
      break;
  }
  return keys;
}

export const matchKeyId = (k: MatchKey): string => `${k.filter}:${k.address}`;
