import type { Queryable } from '../client.js';

/**
 * `outbox_dead_letters`: outbox events the dispatcher set aside because it could not process
 * them. Written by the matcher in the transaction that advances its cursor past them; read by
 * operators and tests.
 */

export type DeadLetter = { outboxEventId: number; reason: string };

export type StoredDeadLetter = DeadLetter & { chainId: number; type: string; payload: unknown; createdAt: Date };

/** Copies the events' rows (type and payload as stored) with their reasons; a repeat is a no-op. */
export async function insertMany(tx: Queryable, letters: DeadLetter[]): Promise<void> {
  if (letters.length === 0) return;
  await tx.query(
    `insert into outbox_dead_letters (outbox_event_id, chain_id, type, payload, reason)
     select e.id, e.chain_id, e.type, e.payload, u.reason
     from unnest($1::bigint[], $2::text[]) as u(id, reason) join outbox_events e on e.id = u.id
     on conflict (outbox_event_id) do nothing`,
    [letters.map((l) => l.outboxEventId), letters.map((l) => l.reason)],
  );
}

export async function listByChain(db: Queryable, chainId: number): Promise<StoredDeadLetter[]> {
  const { rows } = await db.query<{
    outbox_event_id: string;
    chain_id: string;
    type: string;
    payload: unknown;
    reason: string;
    created_at: Date | string;
  }>(
    `select outbox_event_id, chain_id, type, payload, reason, created_at from outbox_dead_letters
      where chain_id = $1 order by outbox_event_id`,
    [chainId],
  );
  return rows.map((r) => ({
    outboxEventId: Number(r.outbox_event_id),
    chainId: Number(r.chain_id),
    type: r.type,
    payload: r.payload,
    reason: r.reason,
    createdAt: new Date(r.created_at),
  }));
}
