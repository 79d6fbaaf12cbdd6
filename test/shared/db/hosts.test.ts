/**
 * Multi-host database URLs (shared/db/hosts.ts): parsing, and host selection against two private
 * PostgreSQL servers (one turned read-only with `default_transaction_read_only`, as pg_auto_failover
 * does to a promoted standby until the old primary is demoted) and a real streaming standby.
 */
import { expect } from 'chai';
import pg from 'pg';
import { createPostgresDb, isDatabaseUnavailable, type Db } from '../../../shared/db/client.js';
import { parseDatabaseUrl, splitDatabaseUrls } from '../../../shared/db/hosts.js';
import { TEST_DATABASE_URL } from '../../helpers/db.js';
import { startPostgresServer, type PostgresServer } from '../../helpers/pgServer.js';
import { startTcpProxy, type ServerBytes } from '../../helpers/tcpProxy.js';
import { postgresServerBinaries, startReplicatedPostgres, type ReplicatedPostgres } from '../../helpers/pgReplica.js';

describe('multi-host database URLs', () => {
  describe('parseDatabaseUrl', () => {
    it('reads hosts, ports and target_session_attrs the libpq way', () => {
      const parsed = parseDatabaseUrl('postgres://u:p%40ss@h1:5433,h2,[::1]:6000/db?sslmode=disable&target_session_attrs=read-write');
      expect(parsed.hosts).to.deep.equal([
        { host: 'h1', port: 5433 },
        { host: 'h2', port: 5432 },
        { host: '::1', port: 6000 },
      ]);
      expect(parsed.target).to.equal('read-write');
      expect(parsed.urlFor(parsed.hosts[1]!)).to.equal('postgres://u:p%40ss@h2:5432/db?sslmode=disable');
      expect(parsed.name).to.equal('h1:5433,h2:5432,[::1]:6000/db');
    });

    it('defaults to any and refuses unknown targets', () => {
      expect(parseDatabaseUrl('postgresql://h/db').target).to.equal('any');
      expect(() => parseDatabaseUrl('postgres://h/db?target_session_attrs=leader')).to.throw(/expected one of/);
    });

    it('splits a list of URLs only where a URL starts', () => {
      expect(splitDatabaseUrls('postgres://a:1,b:2/db, postgresql://c/db')).to.deep.equal(['postgres://a:1,b:2/db', 'postgresql://c/db']);
    });
  });

  describe('against private servers', function () {
    this.timeout(120_000);
    let a: PostgresServer;
    let b: PostgresServer;
    let db: Db | undefined;

    const port = (url: string) => new URL(url).port;
    const hostsUrl = (target: string) =>
      `postgres://postgres@127.0.0.1:${port(a.url())},127.0.0.1:${port(b.url())}/postgres?target_session_attrs=${target}`;
    const setReadOnly = async (server: PostgresServer, on: boolean) => {
      const c = new pg.Client({ connectionString: server.url() });
      await c.connect();
      await c.query(`alter system set default_transaction_read_only = ${on ? 'on' : 'off'}`);
      await c.query('select pg_reload_conf()');
      await c.end();
      await new Promise((r) => setTimeout(r, 100)); // the reload reaches every backend
    };
    /** Writes until one succeeds; answers the failures seen (each must say "unavailable"). */
    const writeUntilItLands = async (target: Db): Promise<number> => {
      for (let failures = 0; failures < 50; failures++) {
        try {
          await target.query('insert into marks values (default)');
          return failures;
        } catch (error) {
          expect(isDatabaseUnavailable(error), (error as Error).message).to.equal(true);
          await new Promise((r) => setTimeout(r, 50));
        }
      }
      throw new Error('no write landed');
    };
    const serverPort = async (target: Db) => (await target.query<{ port: number }>('select inet_server_port() as port')).rows[0]!.port;

    before(async function () {
      if (!postgresServerBinaries()) this.skip();
      [a, b] = await Promise.all([startPostgresServer(), startPostgresServer()]);
      for (const s of [a, b]) {
        const c = new pg.Client({ connectionString: s.url() });
        await c.connect();
        await c.query('create table marks (id serial primary key)');
        await c.end();
      }
    });
    afterEach(async () => {
      await db?.close();
      db = undefined;
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
    });

    it('read-write: skips the read-only host, follows the switch of roles, and drops connections to the old host', async () => {
      await setReadOnly(a, true);
      db = createPostgresDb(hostsUrl('read-write'), { max: 4 });
      expect(await serverPort(db)).to.equal(Number(port(b.url())));
      // Fill the pool with connections to b.
      await Promise.all(Array.from({ length: 4 }, () => db!.query('select pg_sleep(0.05)')));
      await writeUntilItLands(db);

      // The failover: b turns read-only (its sessions too), a becomes writable.
      await setReadOnly(b, true);
      await setReadOnly(a, false);
      const failures = await writeUntilItLands(db);
      expect(failures, 'writes refused before the new host was found').to.be.at.most(1);
      for (let i = 0; i < 8; i++) expect(await serverPort(db)).to.equal(Number(port(a.url())));
      await setReadOnly(b, false);
    });

    it('read-write: a host that goes down is left for the next one, in a transaction and a session too', async () => {
      await setReadOnly(b, true);
      db = createPostgresDb(hostsUrl('read-write'), { max: 2, connectTimeoutMs: 2_000 });
      await writeUntilItLands(db);
      expect(await serverPort(db)).to.equal(Number(port(a.url())));
      await setReadOnly(b, false);
      await a.crash();
      try {
        const failures = await writeUntilItLands(db);
        expect(failures).to.be.at.most(2);
        await db.transaction((tx) => tx.query('insert into marks values (default)'));
        await db.withSession((s) => s.query('insert into marks values (default)'));
        expect(await serverPort(db)).to.equal(Number(port(b.url())));
      } finally {
        await a.start();
      }
    });

    it('fails as unavailable (08001) when no host fits, and connects once one does', async () => {
      await setReadOnly(a, true);
      await setReadOnly(b, true);
      db = createPostgresDb(hostsUrl('read-write'), { max: 2 });
      const error = await db.query('select 1').then(
        () => null,
        (e: unknown) => e as Error & { code?: string },
      );
      expect(error?.code).to.equal('08001');
      expect(error?.message).to.match(/no host of .* accepts target_session_attrs=read-write/);
      expect(isDatabaseUnavailable(error)).to.equal(true);
      await setReadOnly(b, false);
      expect(await serverPort(db)).to.equal(Number(port(b.url())));
      await setReadOnly(a, false);
    });

    it('LISTEN follows the host too', async () => {
      await setReadOnly(a, true);
      db = createPostgresDb(hostsUrl('read-write'), { max: 2 });
      const heard: string[] = [];
      const unlisten = await db.listen('hosts_test', (p) => heard.push(p));
      const c = new pg.Client({ connectionString: b.url() });
      await c.connect();
      await c.query(`notify hosts_test, 'on b'`);
      await c.end();
      await new Promise((r) => setTimeout(r, 200));
      expect(heard).to.deep.equal(['on b']);
      await unlisten();
      await setReadOnly(a, false);
    });
  });

  describe('against a primary and its streaming standby', function () {
    this.timeout(120_000);
    let cluster: ReplicatedPostgres;
    before(async function () {
      if (!postgresServerBinaries()) this.skip();
      cluster = await startReplicatedPostgres();
    });
    after(async () => {
      await cluster?.stop();
    });

    const both = (first: string, second: string, target: string) =>
      `postgres://postgres@127.0.0.1:${new URL(first).port},127.0.0.1:${new URL(second).port}/postgres?target_session_attrs=${target}`;
    const inRecovery = async (url: string) => {
      const db = createPostgresDb(url, { max: 1 });
      try {
        return (await db.query<{ r: boolean }>('select pg_is_in_recovery() as r')).rows[0]!.r;
      } finally {
        await db.close();
      }
    };

    it('primary, standby, prefer-standby, read-only and any pick as libpq does', async () => {
      const [p, r] = [cluster.primaryUrl(), cluster.replicaUrl()];
      expect(await inRecovery(both(r, p, 'primary'))).to.equal(false);
      expect(await inRecovery(both(p, r, 'standby'))).to.equal(true);
      expect(await inRecovery(both(p, r, 'prefer-standby'))).to.equal(true);
      expect(await inRecovery(both(p, r, 'read-only'))).to.equal(true);
      expect(await inRecovery(both(p, r, 'any'))).to.equal(false);
      expect(await inRecovery(both(r, p, 'any'))).to.equal(true);
    });

    it('prefer-standby falls back to the primary while the standby is down, and keeps it after (the last good host)', async () => {
      const db = createPostgresDb(both(cluster.primaryUrl(), cluster.replicaUrl(), 'prefer-standby'), { max: 1, connectTimeoutMs: 2_000 });
      try {
        const recovery = async () => (await db.query<{ r: boolean }>('select pg_is_in_recovery() as r')).rows[0]!.r;
        expect(await recovery()).to.equal(true);
        await cluster.killReplica();
        let answer: boolean | null = null;
        for (let i = 0; i < 5 && answer === null; i++) answer = await recovery().catch(() => null);
        expect(answer, 'answered by the primary').to.equal(false);
        await cluster.startReplica();
        // The primary fits prefer-standby as well: it is kept until a connection to it fails.
        expect(await recovery()).to.equal(false);
      } finally {
        await db.close();
      }
    });
  });

  describe('a connection the server ends as it opens', () => {
    /** ErrorResponse FATAL 57P01, what pg_terminate_backend and a restart send. */
    const termination = (() => {
      const fields = Buffer.from('SFATAL\0VFATAL\0C57P01\0Mterminating connection due to administrator command\0\0', 'latin1');
      const head = Buffer.alloc(5);
      head.write('E', 0, 'latin1');
      head.writeInt32BE(4 + fields.length, 1);
      return Buffer.concat([head, fields]);
    })();

    /**
     * What a proxy in front of PostgreSQL passes on: the server's bytes up to the ReadyForQuery of
     * the connection's startup, and a termination in the same write; the client parses both in one go.
     */
    const endedAsItOpens: ServerBytes = (client, upstream) => {
      let pending = Buffer.alloc(0);
      return (chunk) => {
        pending = Buffer.concat([pending, chunk]);
        // Messages: a type byte, then a length that counts itself.
        for (let at = 0; at + 5 <= pending.length;) {
          const length = 1 + pending.readInt32BE(at + 1);
          if (at + length > pending.length) return;
          if (pending[at] === 0x5a /* Z: ReadyForQuery */) {
            client.end(Buffer.concat([pending.subarray(0, at + length), termination]));
            upstream.destroy();
            return;
          }
          at += length;
        }
      };
    };

    it('fails the query that gets the connection, and the process carries on', async function () {
      if (!TEST_DATABASE_URL) this.skip(); // PGlite opens no connections
      const target = new URL(TEST_DATABASE_URL);
      const proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) }, endedAsItOpens);
      const url = new URL(TEST_DATABASE_URL);
      url.host = `127.0.0.1:${proxy.port}`;
      const db = createPostgresDb(url.toString(), { max: 2, connectTimeoutMs: 2_000 });
      try {
        // Without a listener for the 'error' the termination emits before the pool listens, this
        // would be an uncaught exception (mocha fails the test with it).
        for (let i = 0; i < 3; i++) {
          const failure = await db.query('select 1').then(
            () => null,
            (error: unknown) => error as Error,
          );
          expect(failure, 'the query on an ended connection fails').to.be.an('error');
        }
      } finally {
        await db.close();
        await proxy.close();
      }
    });
  });
});
