import type { NetworkConfig } from '../shared/config.js';
import { createPostgresDb, replicationLagSeconds, type Db } from '../shared/db/client.js';
import { parseDatabaseUrl } from '../shared/db/hosts.js';
import type { IndexerState } from '../shared/db/tables/indexerState.js';
import type { Logger } from '../shared/log.js';
import { createIndexerView, type IndexerView } from './indexerView.js';

/**
 * The web process's read replicas (DATABASE_READ_URL): streaming standbys of the primary that serve
 * the reads of endpoints declared `reads: 'replica'` (the default of queries).
 *
 * What keeps an answer from a replica honest:
 * - Its cache epoch and finality come from the replica's own `indexer_state` (each replica has its
 *   own IndexerView), i.e. from what it has replayed: an answer is never tagged with a newer epoch
 *   or head than the rows it was computed from.
 * - A replica whose replay is more than READ_REPLICA_MAX_LAG_SECONDS behind, or that cannot be
 *   reached, is skipped until its next check (once a second) says otherwise; a request whose query
 *   fails because the replica went away is run again elsewhere (runEndpoint).
 * - Answers of this process never go backwards: the process remembers, per network, the newest
 *   (reorg epoch, indexed block) it has answered at (the floor), and reads only from a replica whose
 *   state is at or past it, else from the primary, which is always at least as far.
 * The shared cache adds the rule across processes: an entry is never replaced by one computed at an
 * older state (server/cache/responseCache.ts).
 */

export type Replica = {
  /** host:port/database, for logs and metrics (no credentials). */
  readonly name: string;
  readonly db: Db;
  /** What this replica has replayed of `indexer_state`. */
  readonly indexer: IndexerView;
  /** Whether the last check found it reachable and within the lag bound. */
  readonly usable: boolean;
  /** Replay lag at the last check, in seconds; null when unknown (down, or nothing replayed yet). */
  readonly lagSeconds: number | null;
};

/** Where one request reads: a replica, or the primary (`replica` null) — with the indexer state it has. */
export type Reader = {
  db: Db;
  indexer: IndexerView;
  states: ReadonlyMap<number, IndexerState>;
  replica: Replica | null;
};

export type ReadReplicas = {
  readonly replicas: readonly Replica[];
  /**
   * A reader for a request whose answer depends on `networks`: the next usable replica at or past
   * the floor, else the primary. The reader's state raises the floor.
   */
  choose(primary: { db: Db; indexer: IndexerView }, networks: readonly NetworkConfig[]): Promise<Reader>;
  /** Raises the floor to `states` (an answer of that state was served, e.g. from the cache). */
  served(networks: readonly NetworkConfig[], states: ReadonlyMap<number, IndexerState>): void;
  /** Takes a replica out of rotation after a connection failure, until its next good check. */
  markDown(replica: Replica): void;
  /** Checks every replica now (lag and reachability); resolves when done. */
  check(): Promise<void>;
  close(): Promise<void>;
};

/** How often each replica's lag is measured. */
const CHECK_INTERVAL_MS = 1000;
/** A replica that does not answer within this is treated as down (requests must not wait on it). */
const REPLICA_CONNECT_TIMEOUT_MS = 1000;

type Position = { epoch: number; block: number };

/** Whether state `s` is at or past `floor` (a reorg moves the epoch forward and the block back). */
function atOrPast(s: IndexerState | undefined, floor: Position | undefined): boolean {
  if (!floor) return true;
  if (!s) return false;
  return s.reorgEpoch > floor.epoch || (s.reorgEpoch === floor.epoch && s.indexedBlock >= floor.block);
}

function nameOf(url: string): string {
  return parseDatabaseUrl(url).name;
}

export function createReadReplicas(
  urls: readonly string[],
  options: { networks: readonly NetworkConfig[]; maxLagSeconds: number; statementTimeoutMs?: number; log: Logger },
): ReadReplicas {
  const { log, maxLagSeconds } = options;
  const members = urls.map((url) => {
    const name = nameOf(url);
    const db = createPostgresDb(url, {
      statementTimeoutMs: options.statementTimeoutMs,
      connectTimeoutMs: REPLICA_CONNECT_TIMEOUT_MS,
      name,
    });
    return {
      name,
      db,
      indexer: createIndexerView(db, options.networks, { log }),
      usable: false,
      lagSeconds: null as number | null,
      checking: null as Promise<void> | null,
    };
  });
  type Member = (typeof members)[number];
  const floor = new Map<number, Position>();
  let turn = 0;

  const isAtFloor = (states: ReadonlyMap<number, IndexerState>, networks: readonly NetworkConfig[]) =>
    networks.every((n) => atOrPast(states.get(n.chainId), floor.get(n.chainId)));

  function setUsable(member: Member, usable: boolean, why: string) {
    if (member.usable !== usable)
      log.warn(
        { replica: member.name, lagSeconds: member.lagSeconds },
        usable ? 'read replica back in rotation' : `read replica skipped: ${why}`,
      );
    member.usable = usable;
  }

  function checkOne(member: Member): Promise<void> {
    member.checking ??= replicationLagSeconds(member.db)
      .then((lag) => {
        member.lagSeconds = lag;
        if (lag === null) setUsable(member, false, 'replay position unknown');
        else setUsable(member, lag <= maxLagSeconds, `lag ${lag.toFixed(1)} s over ${maxLagSeconds} s`);
      })
      .catch((err: unknown) => {
        member.lagSeconds = null;
        setUsable(member, false, `unreachable (${err instanceof Error ? err.message : String(err)})`);
      })
      .finally(() => {
        member.checking = null;
      });
    return member.checking;
  }

  const check = async () => {
    await Promise.all(members.map(checkOne));
  };
  void check();
  const timer = setInterval(() => void check(), CHECK_INTERVAL_MS);
  timer.unref();

  const served: ReadReplicas['served'] = (networks, states) => {
    for (const n of networks) {
      const s = states.get(n.chainId);
      // Only ever raised.
      if (s && atOrPast(s, floor.get(n.chainId))) floor.set(n.chainId, { epoch: s.reorgEpoch, block: s.indexedBlock });
    }
  };

  return {
    replicas: members,
    async choose(primary, networks) {
      for (let i = 0; i < members.length; i++) {
        const member = members[(turn + i) % members.length]!;
        if (!member.usable) continue;
        let states = await member.indexer.current();
        // Replicas trail by milliseconds: a remembered state below the floor is usually just old.
        if (!isAtFloor(states, networks)) states = await member.indexer.refresh();
        if (!isAtFloor(states, networks) || !member.usable) continue;
        turn = (turn + i + 1) % members.length;
        served(networks, states);
        return { db: member.db, indexer: member.indexer, states, replica: member };
      }
      let states = await primary.indexer.current();
      if (!isAtFloor(states, networks)) states = await primary.indexer.refresh();
      served(networks, states);
      return { db: primary.db, indexer: primary.indexer, states, replica: null };
    },
    served,
    markDown(replica) {
      const member = members.find((m) => m === replica);
      if (!member) return;
      member.lagSeconds = null;
      setUsable(member, false, 'connection failed');
    },
    check,
    async close() {
      clearInterval(timer);
      await Promise.all(members.map((m) => m.db.close()));
    },
  };
}
