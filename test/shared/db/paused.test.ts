/**
 * A PostgreSQL server that is paused (SIGSTOP: its connections stay open, nothing answers) against
 * one that is only slow. A paused server is an outage: a statement on a pooled connection fails
 * within the statement timeout and the grace after it, as "database unavailable" (the web answers
 * 503, the workers wait and retry), its connection is closed, and the pool answers again once the
 * server is back. A statement that runs past its timeout on a server that answers is not an outage.
 * Work under a deadline (a web request's) waits no longer than it in all, however many waits it makes.
 * On a private server (test/helpers/pgServer.ts): the shared one is never paused.
 */
import { expect } from 'chai';
import request from 'supertest';
import { createApp } from '../../../server/app.js';
import { createWebServices, type WebServices } from '../../../server/services.js';
import {
  ANSWER_GRACE_MS,
  DatabaseDeadlineError,
  DatabaseNotAnsweringError,
  createDb,
  isDatabaseUnavailable,
  withDeadline,
  type Db,
} from '../../../shared/db/client.js';
import { createLogger } from '../../../shared/log.js';
import { createTestKey, testConfig } from '../../helpers/app.js';
import { createMigratedDatabaseOn, startPostgresServer, type PostgresServer } from '../../helpers/pgServer.js';
import { postgresServerBinaries } from '../../helpers/pgReplica.js';

const STATEMENT_TIMEOUT_MS = 1_000;
/** The longest a statement may wait on a paused server: its limit, the grace, and room for a busy machine. */
const BOUND_MS = STATEMENT_TIMEOUT_MS + ANSWER_GRACE_MS + 1_500;

/** How a promise settled, and when (ms after the call). */
async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; value?: T; error?: unknown }> {
  const started = Date.now();
  try {
    const value = await run();
    return { ms: Date.now() - started, value };
  } catch (error) {
    return { ms: Date.now() - started, error };
  }
}

describe('a paused PostgreSQL server (SIGSTOP) against a slow statement', function () {
  this.timeout(120_000);
  let server: PostgresServer;
  let url: string;
  let db: Db;

  before(async function () {
    if (!postgresServerBinaries()) this.skip();
    server = await startPostgresServer();
    url = await createMigratedDatabaseOn(server, 'paused');
    db = await createDb({ databaseUrl: url, max: 4, statementTimeoutMs: STATEMENT_TIMEOUT_MS, connectTimeoutMs: STATEMENT_TIMEOUT_MS });
  });
  /**
   * Pauses the server, resuming it by itself well past the bound: a client without a limit of its
   * own then sees its statements answered late instead of hanging the test.
   */
  let resumeLater: NodeJS.Timeout | undefined;
  const pause = () => {
    server.pause();
    resumeLater = setTimeout(() => server.resume(), BOUND_MS * 2);
  };
  afterEach(() => {
    clearTimeout(resumeLater);
    server?.resume();
  });
  after(async () => {
    await db?.close();
    await server?.stop();
  });

  it('fails a statement past its timeout as slow (57014), not as an outage, and keeps the connection', async () => {
    const slow = await timed(() => db.query(`select pg_sleep(${(STATEMENT_TIMEOUT_MS * 3) / 1000})`));
    expect((slow.error as { code?: string }).code, String(slow.error)).to.equal('57014');
    expect(isDatabaseUnavailable(slow.error), 'a slow statement is not an outage').to.equal(false);
    expect((await db.query('select 1 as one')).rows).to.deep.equal([{ one: 1 }]);
  });

  it('fails statements, transactions and sessions as unavailable within the bound while paused, then answers again', async () => {
    // Warm connections in the pool, and a session that is lost with its connection.
    await Promise.all([1, 2, 3].map(() => db.query('select pg_sleep(0.05)')));
    let sessionLost: Promise<Error> | undefined;
    let releaseSession: () => void = () => undefined;
    const session = db.withSession(async (s) => {
      await s.query('select 1');
      sessionLost = s.lost;
      await new Promise<void>((resolve) => (releaseSession = resolve));
      return s.query('select 1');
    });
    while (!sessionLost) await new Promise((r) => setTimeout(r, 10));

    pause();
    const [plain, transaction] = await Promise.all([
      timed(() => db.query('select 1')),
      timed(() => db.transaction(async (tx) => tx.query('select 1'))),
    ]);
    releaseSession();
    const inSession = await timed(() => session);
    for (const [what, outcome] of Object.entries({ plain, transaction, inSession })) {
      expect(outcome.error, `${what}: ${String(outcome.error)}`).to.be.instanceOf(Error);
      expect(isDatabaseUnavailable(outcome.error), `${what} is an outage: ${String(outcome.error)}`).to.equal(true);
      expect(outcome.ms, `${what} settled within ${BOUND_MS} ms`).to.be.below(BOUND_MS);
    }
    expect(plain.error).to.be.instanceOf(DatabaseNotAnsweringError);
    expect(await sessionLost, 'the session reports its connection lost').to.be.instanceOf(DatabaseNotAnsweringError);

    server.resume();
    expect((await db.query('select 1 as one')).rows).to.deep.equal([{ one: 1 }]);
    expect(await db.transaction(async (tx) => (await tx.query('select 2 as two')).rows)).to.deep.equal([{ two: 2 }]);
  });

  it('ends the waits of work under a deadline by it, however many it makes in turn', async () => {
    await Promise.all([1, 2].map(() => db.query('select pg_sleep(0.05)')));
    pause();
    // One statement's own limit and half a second: three statements in turn would wait three times that.
    const budgetMs = STATEMENT_TIMEOUT_MS + ANSWER_GRACE_MS + 500;
    const errors: unknown[] = [];
    const outcome = await timed(() =>
      withDeadline(Date.now() + budgetMs, async () => {
        for (let i = 0; i < 3; i++) await db.query('select 1').catch((error: unknown) => errors.push(error));
      }),
    );
    expect(outcome.ms, 'the three waits together').to.be.below(budgetMs + 1_000);
    expect(errors[0], 'the first ends at its own limit').to.be.instanceOf(DatabaseNotAnsweringError);
    expect(errors[1], 'the second at the deadline').to.be.instanceOf(DatabaseDeadlineError);
    expect(errors[2], 'the third is not sent').to.be.instanceOf(DatabaseDeadlineError);
    for (const error of errors) expect(isDatabaseUnavailable(error), String(error)).to.equal(true);
    server.resume();
    expect((await db.query('select 1 as one')).rows).to.deep.equal([{ one: 1 }]);
  });

  /**
   * Runs `use` on a web app over `db`, the web's statement timeout set to the pool's (a request's
   * database budget is that and the grace), with calls that each ask a new page size: no answer comes
   * from the response cache.
   */
  async function onWebApp(use: (call: (first: number) => request.Test, services: WebServices) => Promise<void>): Promise<void> {
    const log = createLogger({ level: 'silent', name: 'paused' });
    const key = await createTestKey(db, 'paused');
    const config = testConfig({ DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) });
    const services = createWebServices({ db, config, log });
    const app = createApp({ db, config, log, services });
    try {
      await use((first) => request(app).get('/v0/getLatestUserOps').query({ network: 'devnet', first }).set('x-api-key', key), services);
    } finally {
      await services.close();
    }
  }

  function expectUnavailableWithinBound(answers: Array<{ ms: number; value?: request.Response }>): void {
    for (const { ms, value } of answers) {
      expect(value?.status, JSON.stringify(value?.body)).to.equal(503);
      expect(value?.headers['content-type']).to.match(/^application\/json/);
      expect(value?.headers['retry-after']).to.equal('5');
      expect(ms, 'answered within the bound').to.be.below(BOUND_MS);
    }
  }

  it('answers a JSON 503 with Retry-After while paused, on warm and new connections alike, then 200', () =>
    onWebApp(async (call) => {
      expect((await call(1)).status).to.equal(200);
      pause();
      expectUnavailableWithinBound(await Promise.all([2, 3, 4, 5, 6, 7].map((first) => timed(() => call(first)))));
      server.resume();
      expect((await call(8)).status).to.equal(200);
    }));

  it('answers a JSON 503 with Retry-After within one budget when the request waits for the indexer state too', () =>
    onWebApp(async (call, services) => {
      // Warm connections: the endpoint's query finds one at once rather than waiting to connect.
      await Promise.all([1, 2, 3, 4].map(() => db.query('select pg_sleep(0.05)')));
      expect((await call(1)).status).to.equal(200);
      pause();
      // As the indexer's NOTIFY of a move does: each request first reads indexer_state, then runs its
      // own query, two waits in turn that share the request's one budget.
      services.indexer.invalidate();
      expectUnavailableWithinBound(await Promise.all([2, 3].map((first) => timed(() => call(first)))));
      server.resume();
      expect((await call(8)).status).to.equal(200);
    }));
});
