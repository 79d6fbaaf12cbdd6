/**
 * Indexer processes on one PostgreSQL share the networks between them, with the database as the
 * only coordinator. Each process keeps a row of `indexer_members` alive (a heartbeat every
 * `heartbeatMs`, the database's clock) naming the networks it may index; at each beat it reads the
 * live rows and computes the same split as every other process (`assignNetworks`: every network to
 * one process, as evenly as the pins allow), and runs the networks the split gives it. A process
 * that joins is in the next beat of the others (they hand over what the split moves to it). Every
 * session of a process carries its `application_name`: one that dies (SIGKILL, a crash) has none
 * left at once, and the first survivor to beat removes its row; one whose host vanished without
 * closing its sessions stops beating, and after `ttlMs` a survivor removes its row and ends those
 * sessions, so that its writer locks are free — a survivor that was beating steadily itself: after
 * a gap in its own beats (the database paused, the machine starved) every row is late alike. The writer lock of each network stays the guard against two
 * writers: a network moving between processes is written by its new owner only once the old one
 * has let its lock go, from the committed cursor.
 */
import { createHash, randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Db } from '../shared/db/client.js';
import * as indexerMembers from '../shared/db/tables/indexerMembers.js';
import type { NetworkConfig } from '../shared/config.js';
import type { Logger } from '../shared/log.js';
import { Gauge } from 'prom-client';
import { WRITER_LOCK_CLASS } from './writerLock.js';

export type IndexerMember = indexerMembers.IndexerMember;

/** How often each indexer process beats (and looks at the split). */
export const MEMBER_HEARTBEAT_MS = 5_000;
/**
 * A member silent this long is dead even if sessions of it seem open (its host vanished without
 * closing them) — judged only by a member that itself beat within `MEMBER_TTL_MS - MEMBER_HEARTBEAT_MS`
 * of its previous beat.
 */
export const MEMBER_TTL_MS = 15_000;

/** A process's id among the members: readable in pg_stat_activity, unique, short enough for application_name. */
export function newMemberId(): string {
  return `${hostname().slice(0, 24)}-${process.pid}-${randomBytes(3).toString('hex')}`;
}

const rank = (memberId: string, chainId: number): string => createHash('sha256').update(`${memberId}/${chainId}`).digest('hex');

/**
 * The split every member computes alike from the same rows: networks in chain-id order, each to
 * the member that may index it and holds the fewest so far; between members holding as many, the
 * one writing the network now keeps it (a split moves no network it need not), then a hash of
 * (member, network) decides, so that ties do not all fall to one member. Answers chain id → member id.
 */
export function assignNetworks(members: readonly IndexerMember[], writers: ReadonlyMap<number, string> = new Map()): Map<number, string> {
  const held = new Map(members.map((m) => [m.memberId, 0]));
  const chainIds = [...new Set(members.flatMap((m) => m.chainIds))].sort((a, b) => a - b);
  const owners = new Map<number, string>();
  for (const chainId of chainIds) {
    const candidates = members.filter((m) => m.chainIds.includes(chainId));
    const score = (m: IndexerMember) => [held.get(m.memberId)!, writers.get(chainId) === m.memberId ? 0 : 1] as const;
    const owner = candidates.reduce((best, m) => {
      const [a, b] = [score(m), score(best)];
      if (a[0] !== b[0]) return a[0] < b[0] ? m : best;
      if (a[1] !== b[1]) return a[1] < b[1] ? m : best;
      return rank(m.memberId, chainId) > rank(best.memberId, chainId) ? m : best;
    });
    owners.set(chainId, owner.memberId);
    held.set(owner.memberId, held.get(owner.memberId)! + 1);
  }
  return owners;
}

const members = new Gauge({
  name: 'opscan_indexer_members',
  help: 'Indexer processes alive on this database, as this process last read them.',
});
const owned = new Gauge({
  name: 'opscan_indexer_network_owned',
  help: 'Networks the split between indexer processes gives this process (1 each).',
  labelNames: ['network'],
});

export type Membership = {
  memberId: string;
  /** Beats now (tests; the timer beats every heartbeatMs). */
  beat(): Promise<void>;
  /** Leaves: the row is removed, so the others take the networks at once rather than after ttlMs. */
  stop(): Promise<void>;
};

export function startMembership(deps: {
  /** A pool whose sessions carry this member's application_name (indexerMembers.sessionUrl): while one is open, the member is alive. */
  db: Db;
  log: Logger;
  memberId: string;
  /** The networks this process may index (NETWORKS, or INDEXER_NETWORKS). */
  networks: NetworkConfig[];
  /** Called with this process's share after each beat (the supervisor runs exactly these). */
  run(networks: NetworkConfig[]): Promise<void>;
  heartbeatMs?: number;
  ttlMs?: number;
}): Membership {
  const heartbeatMs = deps.heartbeatMs ?? MEMBER_HEARTBEAT_MS;
  const ttlMs = deps.ttlMs ?? MEMBER_TTL_MS;
  const { db, log, memberId } = deps;
  const self = { memberId, chainIds: deps.networks.map((n) => n.chainId) };
  let share: string | null = null;
  let stopped = false;
  let beating: Promise<void> | null = null;

  /** When this process's last beat was written (its own clock), null before the first or after a failed one. */
  let lastBeatAt: number | null = null;
  const beatOnce = async (): Promise<void> => {
    try {
      const previous = lastBeatAt;
      lastBeatAt = null;
      await indexerMembers.beat(db, self);
      lastBeatAt = Date.now();
      // The dead are judged only by a process that was itself beating all along. After a gap of its
      // own (a failed beat: the database restarting or paused; a late one: the machine starved of
      // CPU) the others were held up alike — their rows are late and their sessions reconnecting
      // without their processes being gone — and the next beat judges.
      const steady = previous !== null && lastBeatAt - previous <= ttlMs - heartbeatMs;
      const dead = steady ? await indexerMembers.removeDead(db, ttlMs) : [];
      for (const gone of dead) log.warn({ member: gone }, 'an indexer process is gone; its networks are taken over');
      const alive = await indexerMembers.listAlive(db, ttlMs);
      const owners = assignNetworks(alive, await indexerMembers.listWriters(db, WRITER_LOCK_CLASS));
      const mine = deps.networks.filter((n) => owners.get(n.chainId) === memberId);
      members.set(alive.length);
      owned.reset();
      for (const n of mine) owned.set({ network: n.name }, 1);
      const names = mine.map((n) => n.name).join(',');
      if (names !== share) {
        log.info({ networks: mine.map((n) => n.name), processes: alive.length }, 'networks of this process');
        share = names;
      }
      if (!stopped) await deps.run(mine);
    } catch (err) {
      // The database is away (its client logs the outage once): the networks run on as they are;
      // their writer locks went with their sessions if it really is gone.
      log.debug({ err }, 'indexer heartbeat failed; keeping the current networks');
    }
  };
  const beat = (): Promise<void> => (beating ??= beatOnce().finally(() => (beating = null)));
  const timer = setInterval(() => void beat(), heartbeatMs);
  void beat();

  return {
    memberId,
    beat,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await beating;
      await indexerMembers
        .remove(db, memberId)
        .catch((err: unknown) => log.debug({ err }, 'could not remove this indexer from indexer_members'));
    },
  };
}
