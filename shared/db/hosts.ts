/**
 * Several PostgreSQL hosts behind one URL, the libpq way, for node-postgres (which has none):
 *
 *   postgres://user@h1:5432,h2:5432/db?target_session_attrs=read-write
 *
 * A connection goes to the last host found good. When there is none yet, or it went stale, the
 * hosts are tried in order and the first whose session fits `target_session_attrs` (libpq's values:
 * `any`, the default; `read-write`/`read-only` by `transaction_read_only`; `primary`/`standby` by
 * `pg_is_in_recovery()`; `prefer-standby`: a standby, else any) is remembered. A host goes stale
 * when a connection to it fails or is lost, when a new connection finds it no longer fits (a primary
 * demoted, or turned read-only while a failover is under way), or when a write on it fails with
 * SQLSTATE 25006 (read-only transaction): the next connection looks again, and the pool drops the
 * connections made to it before (`isStale`). So a failover is followed without a restart.
 */
import pg from 'pg';
import { Counter } from 'prom-client';
import type { Logger } from '../log.js';

export const TARGET_SESSION_ATTRS = ['any', 'read-write', 'read-only', 'primary', 'standby', 'prefer-standby'] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

export type Host = { readonly host: string; readonly port: number };

export type DatabaseHosts = {
  readonly hosts: readonly Host[];
  readonly target: TargetSessionAttrs;
  /** The URL with one host only (and without target_session_attrs): what node-postgres understands. */
  urlFor(host: Host): string;
  /** `h1:5432,h2:5432/db`, for logs and metrics (no credentials). */
  readonly name: string;
};

const hostSwitches = new Counter({
  name: 'opscan_db_host_switches_total',
  help: 'Times this process moved its connections to another host of a multi-host database URL (a failover followed).',
  labelNames: ['database'],
});

/** `host:port`, an IPv6 address in brackets. */
export function hostPort(h: Host): string {
  return `${h.host.includes(':') ? `[${h.host}]` : h.host}:${h.port}`;
}

/** Splits `postgres://[user[:pw]@]h1[:p1],h2[:p2]/db?params` into its hosts and target_session_attrs. */
export function parseDatabaseUrl(url: string): DatabaseHosts {
  const match = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/.exec(url);
  if (!match) throw new Error('not a postgres:// or postgresql:// URL');
  const [, scheme, userinfo, hostspec, rest] = match as unknown as [string, string, string | undefined, string, string];
  const hosts = hostspec.split(',').map((entry): Host => {
    // [::1]:5432, host:5432, host
    const m = /^(\[[^\]]*\]|[^:]*)(?::(\d*))?$/.exec(entry);
    if (!m) throw new Error(`bad host "${entry}" in the database URL`);
    const host = decodeURIComponent(m[1] || 'localhost').replace(/^\[(.*)\]$/, '$1');
    return { host, port: m[2] ? Number(m[2]) : 5432 };
  });
  const queryStart = rest.indexOf('?');
  const path = queryStart < 0 ? rest : rest.slice(0, queryStart);
  const params = new URLSearchParams(queryStart < 0 ? '' : rest.slice(queryStart + 1));
  const target = (params.get('target_session_attrs') ?? 'any') as TargetSessionAttrs;
  if (!TARGET_SESSION_ATTRS.includes(target)) {
    throw new Error(`target_session_attrs=${target} in the database URL: expected one of ${TARGET_SESSION_ATTRS.join(', ')}`);
  }
  params.delete('target_session_attrs');
  const query = params.size ? `?${params.toString()}` : '';
  return {
    hosts,
    target,
    urlFor: (h) => `${scheme}${userinfo === undefined ? '' : `${userinfo}@`}${hostPort(h)}${path}${query}`,
    name: `${hosts.map(hostPort).join(',')}${path}`,
  };
}

/** A connection made through the selector: which host, and when (for `isStale`). */
type Placed = { hostIndex?: number; epoch?: number };

export type HostSelector = {
  readonly hosts: DatabaseHosts;
  /** The node-postgres Client class to connect with (pool's `Client`, LISTEN connections). */
  readonly Client: typeof pg.Client;
  /** Whether `client` was connected to a host that went stale since: it should be dropped. */
  isStale(client: pg.ClientBase): boolean;
  /** A query or connection of `client` failed: a read-only refusal or a lost connection makes its host stale. */
  failed(client: pg.ClientBase, error: unknown): void;
  /** The host connections go to now; null while none is known (the next connection looks). */
  readonly current: Host | null;
};

/** Errors that mean the host is not the one to use any more (down, gone, demoted, read-only). */
function meansHostStale(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code === '25006' || code.startsWith('08') || code.startsWith('57P') || code === 'ECONNREFUSED';
  return error instanceof Error && /connection terminated|timeout expired|ECONNRESET|EHOSTUNREACH/i.test(error.message);
}

/** What a session must be for `target` (libpq's target_session_attrs), from its two facts. */
function fits(target: TargetSessionAttrs, session: { readOnly: boolean; inRecovery: boolean }): boolean {
  switch (target) {
    case 'any':
    case 'prefer-standby': // a standby is only preferred: the second pass takes any
      return true;
    case 'read-write':
      return !session.readOnly;
    case 'read-only':
      return session.readOnly;
    case 'primary':
      return !session.inRecovery;
    case 'standby':
      return session.inRecovery;
  }
}

/** An 08001 (sqlclient_unable_to_establish_sqlconnection): unavailable, so callers wait and retry. */
function unableToConnect(message: string, cause?: unknown): Error {
  return Object.assign(new Error(message, { cause }), { code: '08001' });
}

export function createHostSelector(hosts: DatabaseHosts, options: { connectTimeoutMs: number; name: string; log?: Logger }): HostSelector {
  const { target } = hosts;
  /** No choice to make: one host, any session (the plain single-host URL). */
  const trivial = hosts.hosts.length === 1 && target === 'any';
  let current: number | null = trivial ? 0 : null;
  let lastChosen: number | null = null;
  let epoch = 0;
  const staleAt = hosts.hosts.map(() => 0);
  let looking: Promise<number> | null = null;
  const label = (i: number) => hostPort(hosts.hosts[i]!);

  const sessionOf = async (client: pg.ClientBase) => {
    const { rows } = await client.query<{ read_only: boolean; in_recovery: boolean }>(
      `select current_setting('transaction_read_only') = 'on' as read_only, pg_is_in_recovery() as in_recovery`,
    );
    return { readOnly: rows[0]!.read_only, inRecovery: rows[0]!.in_recovery };
  };

  /** One connection to host `i` that is closed again: does it answer, and does it fit? */
  const probe = async (i: number, want: TargetSessionAttrs): Promise<string | null> => {
    // Its one query is bounded as its connection is: a paused host answers neither.
    const client = new pg.Client({
      connectionString: hosts.urlFor(hosts.hosts[i]!),
      connectionTimeoutMillis: options.connectTimeoutMs,
      query_timeout: options.connectTimeoutMs,
    });
    client.on('error', () => undefined);
    try {
      await client.connect();
      if (want === 'any') return null;
      const session = await sessionOf(client);
      if (fits(want, session)) return null;
      return session.inRecovery ? 'a standby' : session.readOnly ? 'read-only' : 'read-write';
    } catch (error) {
      return (error as Error).message;
    } finally {
      await client.end().catch(() => undefined);
    }
  };

  /** Tries the hosts in order; the first that fits becomes current. */
  const look = async (): Promise<number> => {
    const passes: TargetSessionAttrs[] = target === 'prefer-standby' ? ['standby', 'any'] : [target];
    const refusals: string[] = [];
    for (const want of passes) {
      for (let i = 0; i < hosts.hosts.length; i++) {
        const refusal = await probe(i, want);
        if (refusal === null) {
          if (lastChosen !== null && lastChosen !== i) {
            hostSwitches.inc({ database: options.name });
            options.log?.warn(
              { database: options.name, host: label(i), previous: label(lastChosen) },
              'database host changed (failover followed)',
            );
          }
          lastChosen = i;
          current = i;
          return i;
        }
        refusals.push(`${label(i)}: ${refusal}`);
      }
    }
    throw unableToConnect(`no host of ${options.name} accepts target_session_attrs=${target} sessions (${refusals.join('; ')})`);
  };

  const pick = async (): Promise<{ index: number; epoch: number }> => {
    if (current !== null) return { index: current, epoch };
    looking ??= look().finally(() => (looking = null));
    return { index: await looking, epoch };
  };

  const markStale = (index: number, since: number, why: string) => {
    if (trivial || staleAt[index]! > since) return; // already known
    staleAt[index] = ++epoch;
    if (current === index) {
      current = null;
      options.log?.warn(
        { database: options.name, host: label(index), reason: why },
        'database host stale; the next connection looks again',
      );
    }
  };

  class SelectingClient extends pg.Client {
    hostIndex?: number;
    epoch?: number;

    constructor(config?: string | pg.ClientConfig) {
      super(config);
      // The pool hears of a new connection only after connectSelected's own steps (microtasks
      // later than node-postgres's callback), and listens for its errors from then on. A server
      // ending the connection just as it opens (57P01 in the same packet as ReadyForQuery) emits
      // 'error' in between, which with no listener would end the process: this one keeps it a
      // failed connection (its first query fails; the pool drops it). Other listeners still hear it.
      this.on('error', () => undefined);
    }

    // node-postgres calls connect with a callback (the pool) or without (a promise of the client).
    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error | null) => void): void;
    override connect(callback?: (err: Error | null) => void): Promise<pg.Client> | void {
      const done = this.connectSelected();
      if (!callback) return done.then(() => this);
      done.then(
        () => callback(null),
        (error: Error) => callback(error),
      );
    }

    private async connectSelected(): Promise<void> {
      const { index, epoch: at } = await pick();
      const host = hosts.hosts[index]!;
      // Read by Client#_connect when it opens the socket.
      const self = this as unknown as { host: string; port: number; connectionParameters: { host: string; port: number } };
      self.host = self.connectionParameters.host = host.host;
      self.port = self.connectionParameters.port = host.port;
      this.hostIndex = index;
      this.epoch = at;
      try {
        await new Promise<void>((resolve, reject) => super.connect((error: Error | null) => (error ? reject(error) : resolve())));
      } catch (error) {
        markStale(index, at, (error as Error).message);
        throw error;
      }
      if (target === 'any' || target === 'prefer-standby') return;
      // libpq checks every new connection: the host may have changed role since it was chosen.
      const session = await sessionOf(this);
      if (fits(target, session)) return;
      markStale(index, at, session.readOnly ? 'read-only' : 'in recovery');
      await this.end().catch(() => undefined);
      throw unableToConnect(`${label(index)} no longer accepts target_session_attrs=${target} sessions (a failover under way?)`);
    }
  }

  return {
    hosts,
    Client: SelectingClient,
    isStale(client) {
      const placed = client as Placed;
      return placed.hostIndex !== undefined && staleAt[placed.hostIndex]! > (placed.epoch ?? 0);
    },
    failed(client, error) {
      const placed = client as Placed;
      if (placed.hostIndex !== undefined && meansHostStale(error)) markStale(placed.hostIndex, placed.epoch ?? 0, (error as Error).message);
    },
    get current() {
      return current === null ? null : hosts.hosts[current]!;
    },
  };
}

/**
 * Splits a comma list of database URLs (DATABASE_READ_URL) where each URL may itself name several
 * hosts with commas: a new URL starts only where `postgres://` or `postgresql://` does.
 */
export function splitDatabaseUrls(list: string): string[] {
  return list
    .split(/,(?=\s*postgres(?:ql)?:\/\/)/)
    .map((u) => u.trim())
    .filter(Boolean);
}
