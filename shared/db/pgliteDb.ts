/**
 * The PGlite implementation of Db: Postgres compiled to WASM, embedded in the process, in a data
 * folder one process claims (or in memory). It returns int8, numeric and bytea as node-postgres
 * does here (bytea.ts), and runs parameterless text through the simple protocol as node-postgres does.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import { hexOfBytea } from './bytea.js';
import type { Db, Queryable } from './client.js';

/**
 * PGlite is one process's store: a second process opening the same folder would corrupt it. A pid
 * file claims the folder; a live owner makes the second opener fail with a clear message.
 */
function claimDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const pidFile = join(dataDir, 'opscan.pid');
  try {
    const owner = Number(readFileSync(pidFile, 'utf8'));
    if (owner && owner !== process.pid && isAlive(owner)) {
      throw new Error(`The embedded store ${dataDir} is in use by process ${owner}. Stop it first, or use PostgreSQL (DATABASE_URL).`);
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  writeFileSync(pidFile, String(process.pid));
  return () => rmSync(pidFile, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export async function createPgliteDb(dataDir?: string): Promise<Db> {
  const release = dataDir ? claimDataDir(dataDir) : () => {};
  const keepAsText = (value: string) => value;
  const lite = await PGlite.create(dataDir, {
    // Match node-postgres: int8 and numeric as exact strings.
    // bytea as 0x-hex strings (bytea.ts); PGlite parses bytea[] elements with the bytea parser.
    parsers: { [pgliteTypes.INT8]: keepAsText, [pgliteTypes.NUMERIC]: keepAsText, [pgliteTypes.BYTEA]: hexOfBytea },
    serializers: { [pgliteTypes.BYTEA]: byteaParameter },
  });

  const query = runOn(lite);
  const listening = new Set<() => Promise<void>>();

  return {
    kind: 'pglite',
    query,
    transaction(fn) {
      return lite.transaction(async (tx) => fn({ query: runOn(tx) }));
    },
    // PGlite is one session already, and in-process: it is never lost.
    withSession(fn) {
      return fn({ query, lost: new Promise<Error>(() => undefined) });
    },
    async listen(channel, onNotify) {
      const stopListening = await lite.listen(channel, onNotify);
      const unsubscribe = async () => {
        if (!listening.delete(unsubscribe)) return;
        await stopListening();
      };
      listening.add(unsubscribe);
      return unsubscribe;
    },
    // As on PostgreSQL, closing ends the subscriptions: a subscriber that unsubscribes later (a
    // service closed after the store) finds nothing left to do instead of a closed PGlite.
    async close() {
      await Promise.all([...listening].map((unsubscribe) => unsubscribe()));
      await lite.close();
      release();
    },
  };
}

/** A bytea parameter on PGlite: `\x…` text as node-postgres sends it; a `0x…` string is a caller's mistake. */
function byteaParameter(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('\\x')) {
    throw new Error(`A bytea parameter must be \\x-hex text (bytea(hex)), not ${JSON.stringify(value)?.slice(0, 20)}`);
  }
  return value;
}

type PgliteRunner = Pick<PGlite, 'query' | 'exec'>;

/**
 * Like node-postgres, a query without parameters goes through the simple protocol, which accepts
 * several statements (migrations); with parameters it is one prepared statement.
 */
function runOn(target: PgliteRunner): Queryable['query'] {
  return async (text, values) => {
    if (values === undefined) {
      const results = await target.exec(text);
      const last = results[results.length - 1];
      return { rows: (last?.rows ?? []) as never[], rowCount: last?.affectedRows ?? last?.rows.length ?? 0 };
    }
    const res = await target.query(text, values as unknown[]);
    return { rows: res.rows as never[], rowCount: res.affectedRows ?? res.rows.length };
  };
}
