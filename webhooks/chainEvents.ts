import { z } from 'zod';
import type { OutboxEvent } from '../shared/db/tables/webhookOutboxCursors.js';
import type { WebhookFilter } from '../shared/models/webhook.js';

/**
 * The outbox events the indexer writes, parsed, and which (filter, address) pairs each one matches.
 * Pure: no I/O. Addresses are compared in lower case.
 */

const lower = z.string().transform((s) => s.toLowerCase());
const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

const userOperationSchema = z.object({
  userOpHash: lower,
  sender: lower,
  paymaster: lower.nullable(),
  bundler: lower,
  beneficiary: lower.nullable().optional(),
  /** The factory that deployed the sender (on every op of such an account). */
  factory: lower.nullable().optional(),
  targets: z.array(lower).default([]),
  transferParties: z.array(lower).default([]),
  blockNumber: z.coerce.number(),
  blockHash: lower,
  transactionHash: lower,
  bundleIndex: z.number().int(),
  logIndex: z.number().int(),
});

const accountDeployedSchema = z.object({
  userOpHash: lower,
  account: lower,
  factory: lower,
  paymaster: lower.nullable(),
  blockNumber: z.coerce.number(),
  blockHash: lower,
  transactionHash: lower,
  logIndex: z.number().int(),
});

const reorgSchema = z.object({
  commonAncestor: z.coerce.number(),
  removedFromBlock: z.coerce.number(),
  removedUserOpHashes: z.array(lower).default([]),
  removedAccounts: z.array(lower).default([]),
});

type Base = { outboxId: number; chainId: number; recordedAt: Date };
export type UserOperationEvent = Base & { type: 'user_operation' } & z.output<typeof userOperationSchema>;
export type AccountDeployedEvent = Base & { type: 'account_deployed' } & z.output<typeof accountDeployedSchema>;
export type ReorgEvent = Base & { type: 'reorg' } & z.output<typeof reorgSchema>;
export type ChainEvent = UserOperationEvent | AccountDeployedEvent | ReorgEvent;

/** Parses an outbox row; null for a type this dispatcher does not know (skipped, not fatal). */
export function parseOutboxEvent(row: OutboxEvent): ChainEvent | null {
  const base = { outboxId: row.id, chainId: row.chainId, recordedAt: row.createdAt };
  switch (row.type) {
    case 'user_operation':
      return { ...base, type: 'user_operation', ...userOperationSchema.parse(row.payload) };
    case 'account_deployed':
      return { ...base, type: 'account_deployed', ...accountDeployedSchema.parse(row.payload) };
    case 'reorg':
      return { ...base, type: 'reorg', ...reorgSchema.parse(row.payload) };
    default:
      return null;
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
