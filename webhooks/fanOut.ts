import type { Db, Queryable } from '../shared/db/client.js';
import * as outboxDeadLetters from '../shared/db/tables/outboxDeadLetters.js';
import type { DeadLetter } from '../shared/db/tables/outboxDeadLetters.js';
import * as webhookDeliveries from '../shared/db/tables/webhookDeliveries.js';
import type { NewDelivery } from '../shared/db/tables/webhookDeliveries.js';
import * as webhookOps from '../shared/db/tables/webhookOps.js';
import * as cursors from '../shared/db/tables/webhookOutboxCursors.js';
import * as webhooks from '../shared/db/tables/webhooks.js';
import { newDeliveryId } from '../shared/webhookIds.js';
import type { Logger } from '../shared/log.js';
import { matchKeyId, matchKeysOf, parseOutboxEvent, type ChainEvent, type ReorgEvent } from './chainEvents.js';
import { accountDeployedBody, reorgBody, userOperationBody, type Addressee } from './eventBodies.js';

/**
 * The matcher: turns a chain's new outbox events into deliveries. One transaction per batch reads
 * events after the chain's cursor, records one delivery per matching (webhook, event) and advances
 * the cursor, so a crash re-reads the batch and the unique (webhook, event) key makes that harmless.
 * Events wait for finality: the batch stops at the first event whose block is less than
 * `finalityDepth` blocks below the indexer's cursor (devnet: depth 0, at once).
 * An event that cannot be processed (its payload does not fit the outbox contract, or no delivery
 * body can be built from it) is dead-lettered in the same transaction and the cursor moves past it:
 * retrying it would fail the same way and hold back every later event of the chain.
 */

export type ChainToMatch = { chainId: number; network: string; finalityDepth: number };

export type FanOutResult = { events: number; deliveries: number; more: boolean; deadLetters: DeadLetter[] };

export async function fanOutChain(deps: { db: Db; log: Logger }, chain: ChainToMatch, batchSize: number): Promise<FanOutResult> {
  return deps.db.transaction(async (tx) => {
    const cursor = await cursors.lock(tx, chain.chainId);
    if (cursor === null) return { events: 0, deliveries: 0, more: false, deadLetters: [] }; // another dispatcher is on it
    const indexed = await cursors.findIndexedBlock(tx, chain.chainId);
    const rows = await cursors.listEventsAfter(tx, chain.chainId, cursor, batchSize);
    const finalBlock = indexed === null ? -1 : indexed - chain.finalityDepth;
    const ready = [];
    for (const row of rows) {
      // Reorg notices concern ops already sent: they never wait.
      if (row.type !== 'reorg' && row.blockNumber > finalBlock) break;
      ready.push(row);
    }
    if (ready.length === 0) return { events: 0, deliveries: 0, more: false, deadLetters: [] };

    const events: ChainEvent[] = [];
    const deadLetters: DeadLetter[] = [];
    for (const row of ready) {
      const parsed = parseOutboxEvent(row);
      if (parsed.ok) events.push(parsed.event);
      else deadLetters.push({ outboxEventId: row.id, reason: parsed.reason });
    }
    const { created, unbuildable } = await deliveriesFor(tx, chain, events, deps.log);
    deadLetters.push(...unbuildable);
    deadLetters.sort((a, b) => a.outboxEventId - b.outboxEventId);
    await outboxDeadLetters.insertMany(tx, deadLetters);
    await cursors.advance(tx, chain.chainId, ready[ready.length - 1]!.id);
    if (created > 0) await webhookDeliveries.notifyDue(tx);
    return { events: ready.length, deliveries: created, more: ready.length === rows.length && rows.length === batchSize, deadLetters };
  });
}

/** Records the events' deliveries; answers how many, and the events whose bodies cannot be built. */
async function deliveriesFor(
  tx: Queryable,
  chain: ChainToMatch,
  events: ChainEvent[],
  log: Logger,
): Promise<{ created: number; unbuildable: DeadLetter[] }> {
  const opHashes = events.flatMap((e) => (e.type === 'reorg' ? [] : [e.userOpHash]));
  const ops = await webhookOps.listByHashes(tx, chain.chainId, [...new Set(opHashes)]);
  const senders = events.flatMap((e) => (e.type === 'user_operation' && !e.factory ? [e.sender] : []));
  const factories = await webhookOps.listAccountFactories(tx, chain.chainId, [...new Set(senders)]);
  const keysPerEvent = events.map((e) => matchKeysOf(e, e.type === 'user_operation' ? (factories.get(e.sender) ?? null) : null));
  const matches = await webhooks.listMatches(tx, chain.chainId, keysPerEvent.flat());
  const byKey = new Map<string, typeof matches>();
  for (const m of matches) byKey.set(matchKeyId(m), [...(byKey.get(matchKeyId(m)) ?? []), m]);

  let pending: NewDelivery[] = [];
  let created = 0;
  const unbuildable: DeadLetter[] = [];
  const address = (webhookId: string): Addressee => ({
    deliveryId: newDeliveryId(),
    webhookId,
    chainId: chain.chainId,
    network: chain.network,
  });
  for (const [i, event] of events.entries()) {
    const eventKey = `outbox:${event.outboxId}`;
    if (event.type === 'reorg') {
      // Deliveries queued before this notice must exist before it looks for them.
      created += await webhookDeliveries.insertMany(tx, pending);
      pending = [];
      created += await webhookDeliveries.insertMany(tx, await reorgNotices(tx, event, eventKey, address));
      continue;
    }
    const op = ops.get(event.userOpHash);
    if (!op || op.blockHash !== event.blockHash) {
      // A later reorg replaced this op's block: the outbox row describes data that is gone.
      log.debug({ chainId: chain.chainId, outboxId: event.outboxId, userOpHash: event.userOpHash }, 'skipped event of a reorged op');
      continue;
    }
    // A webhook hears about events recorded after it was created, once per event however many keys hit it.
    const webhookIds = new Set(
      keysPerEvent[i]!.flatMap((k) => byKey.get(matchKeyId(k)) ?? [])
        .filter((m) => m.createdAt <= event.recordedAt)
        .map((m) => m.webhookId),
    );
    try {
      const bodies = [...webhookIds].map((webhookId): NewDelivery => {
        const to = address(webhookId);
        const body = event.type === 'user_operation' ? userOperationBody(to, event, op) : accountDeployedBody(to, event, op);
        return {
          id: to.deliveryId,
          webhookId,
          eventKey,
          eventType: event.type,
          chainId: chain.chainId,
          userOpHash: event.userOpHash,
          body,
        };
      });
      pending.push(...bodies);
    } catch (err) {
      // Pure code on stored data: it would fail the same way on every retry.
      unbuildable.push({ outboxEventId: event.outboxId, reason: `building the delivery body failed: ${(err as Error).message}` });
    }
  }
  return { created: created + (await webhookDeliveries.insertMany(tx, pending)), unbuildable };
}

async function reorgNotices(
  tx: Queryable,
  event: ReorgEvent,
  eventKey: string,
  address: (webhookId: string) => Addressee,
): Promise<NewDelivery[]> {
  const retracted = await webhookDeliveries.retractOps(tx, event.chainId, event.removedUserOpHashes);
  const enabled = new Set(
    (
      await webhooks.listEnabledByIds(
        tx,
        retracted.map((r) => r.webhookId),
      )
    ).map((w) => w.id),
  );
  const now = new Date();
  return retracted
    .filter((r) => enabled.has(r.webhookId))
    .map((r) => {
      const to = address(r.webhookId);
      const body = reorgBody(to, event, r.userOpHashes, now);
      return { id: to.deliveryId, webhookId: r.webhookId, eventKey, eventType: 'reorg', chainId: event.chainId, userOpHash: null, body };
    });
}
