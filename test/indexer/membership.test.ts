/**
 * Indexer processes judging each other dead (indexer/membership.ts) on a private PostgreSQL server
 * (test/helpers/pgServer.ts: the shared one is never paused): a pause of the database longer than
 * the members' ttl holds every member's beats up alike and evicts none of them, while a member that
 * really went silent with its session open is still removed and its session ended.
 */
import { expect } from 'chai';
import pg from 'pg';
import { pino } from 'pino';
import { startMembership, type Membership } from '../../indexer/membership.js';
import { createDb, type Db, type Queryable } from '../../shared/db/client.js';
import * as indexerMembers from '../../shared/db/tables/indexerMembers.js';
import { createMigratedDatabaseOn, startPostgresServer, type PostgresServer } from '../helpers/pgServer.js';
import { postgresServerBinaries } from '../helpers/pgReplica.js';

const HEARTBEAT_MS = 200;
const TTL_MS = 1_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('indexer processes judging each other dead', function () {
  this.timeout(120_000);
  let server: PostgresServer;
  let url: string;
  let admin: Db;
  const pools: Db[] = [];
  const memberships: Membership[] = [];
  /** The warnings the members logged. */
  const warnings: string[] = [];
  const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg as string) });

  const member = async (memberId: string): Promise<Membership> => {
    const db = await createDb({
      databaseUrl: indexerMembers.sessionUrl(url, memberId),
      max: 2,
      statementTimeoutMs: 300,
      connectTimeoutMs: 300,
    });
    pools.push(db);
    const m = startMembership({ db, log, memberId, networks: [], run: async () => {}, heartbeatMs: HEARTBEAT_MS, ttlMs: TTL_MS });
    memberships.push(m);
    return m;
  };
  const alive = async (): Promise<string[]> => (await indexerMembers.listAlive(admin, TTL_MS)).map((m) => m.memberId);

  before(async function () {
    if (!postgresServerBinaries()) this.skip();
    server = await startPostgresServer();
    url = await createMigratedDatabaseOn(server, 'members');
    admin = await createDb({ databaseUrl: url, max: 2 });
  });
  afterEach(async () => {
    server?.resume();
    await Promise.all(memberships.splice(0).map((m) => m.stop()));
    await Promise.all(pools.splice(0).map((p) => p.close()));
    warnings.length = 0;
  });
  after(async () => {
    await admin?.close();
    await server?.stop();
  });

  it('evicts no member after a stall of the judge itself longer than the ttl (the machine starved of CPU)', async () => {
    // Member b: its own session, its row beaten every heartbeat by this test.
    const b = new pg.Client({ connectionString: indexerMembers.sessionUrl(url, 'member-b') });
    b.on('error', () => {}); // its session ended by a judge: the assertions below say so
    await b.connect();
    const bRows = { query: (sql: string, params?: unknown[]) => b.query(sql, params) } as Queryable;
    const beatB = () => indexerMembers.beat(bRows, { memberId: 'member-b', chainIds: [] });
    await beatB();
    let beating = setInterval(() => void beatB(), HEARTBEAT_MS);
    try {
      const a = await member('member-a');
      const deadline = Date.now() + 30_000;
      while ((await alive()).length < 2 && Date.now() < deadline) await sleep(50);
      await sleep(3 * HEARTBEAT_MS);
      expect(await alive()).to.deep.equal(['member-a', 'member-b']);

      // The whole machine stalls for twice the ttl: neither member beats meanwhile.
      clearInterval(beating);
      const until = Date.now() + 2 * TTL_MS;
      while (Date.now() < until); // a busy wait: this process starved
      // a's first beat after the stall finds b's row late by twice the ttl; b beats right after it.
      await a.beat();
      await beatB();
      beating = setInterval(() => void beatB(), HEARTBEAT_MS);
      await sleep(3 * TTL_MS);

      expect(
        warnings.filter((w) => w.includes('is gone')),
        'members judged dead',
      ).to.deep.equal([]);
      expect(await alive()).to.deep.equal(['member-a', 'member-b']);
    } finally {
      clearInterval(beating);
      await b.end().catch(() => {});
    }
  });

  it('still removes a member silent past the ttl with its session open, and ends that session', async () => {
    // A member whose host vanished: its row beaten once, its session left open, never beating again.
    const ghost = new pg.Client({ connectionString: indexerMembers.sessionUrl(url, 'member-ghost') });
    const ended = new Promise<void>((resolve) => {
      ghost.on('error', () => resolve());
      ghost.on('end', () => resolve());
    });
    await ghost.connect();
    await indexerMembers.beat({ query: (sql: string, params?: unknown[]) => ghost.query(sql, params) } as Queryable, {
      memberId: 'member-ghost',
      chainIds: [],
    });
    await member('member-a');

    const deadline = Date.now() + 30_000;
    while (!warnings.some((w) => w.includes('is gone')) && Date.now() < deadline) await sleep(50);
    expect(warnings.filter((w) => w.includes('is gone'))).to.have.length(1);
    await ended;
    expect(await alive()).to.deep.equal(['member-a']);
  });
});
