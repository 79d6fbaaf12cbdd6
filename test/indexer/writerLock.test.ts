/**
 * One active writer per network: a second indexer on the same PostgreSQL database waits for the
 * first one's advisory lock, writes nothing meanwhile, and takes over when the first one stops.
 */
import { expect } from 'chai';
import { generate, startDevnet, type Devnet } from '../../devnet/index.js';
import { startIndexer, type Indexer } from '../../indexer/index.js';
import { takeWriterLock, writerLockKey } from '../../indexer/writerLock.js';
import { createDb, type Db } from '../../shared/db/client.js';
import { TEST_DATABASE_URL, useTestDb } from '../helpers/db.js';
import { devnetConfig, indexedBlock, quietLogger } from './support.js';

describe('indexer writer lock', function () {
  this.timeout(120_000);
  const t = useTestDb();
  describe('two indexers on one database', twoIndexers(t));
  describe('takeWriterLock', lockWaits(t));
});

/** Holds `chainId`'s writer lock on a session of its own until the returned release() is called. */
async function holdLock(db: Db, chainId: number): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held!: () => void;
  const holding = new Promise<void>((resolve) => (held = resolve));
  const session = db.withSession(async (s) => {
    expect(await takeWriterLock(db, s, chainId, { retryMs: 10 })).to.equal(true);
    held();
    await released;
    await s.query('select pg_advisory_unlock($1::bigint)', [writerLockKey(chainId)]);
  });
  await holding;
  return {
    async release() {
      release();
      await session;
    },
  };
}

function lockWaits(t: { readonly db: Db }) {
  return function () {
    // Chain ids no test network has: the locks are the server's, shared by every database on it.
    const chainId = 0x7fff_0000 + (process.pid % 0xffff);
    const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

    before(function () {
      if (!TEST_DATABASE_URL) this.skip();
    });

    it('waits while another session holds the lock, says so once, and takes it when it is freed', async () => {
      const holder = await holdLock(t.db, chainId);
      let held = 0;
      const taking = t.db.withSession(async (session) => {
        const taken = await takeWriterLock(t.db, session, chainId, { retryMs: 10, onHeld: () => held++ });
        await session.query('select pg_advisory_unlock($1::bigint)', [writerLockKey(chainId)]);
        return taken;
      });
      await sleep(150);
      expect(held, 'onHeld, once however many asks').to.equal(1);
      await holder.release();
      expect(await taking).to.equal(true);
    });

    it('gives up when onHeld throws, or once the caller stops', async () => {
      const holder = await holdLock(t.db, chainId + 1);
      try {
        const refused = t.db.withSession((session) =>
          takeWriterLock(t.db, session, chainId + 1, {
            retryMs: 10,
            onHeld: () => {
              throw new Error('held elsewhere');
            },
          }),
        );
        expect(await refused.then(String, (err: Error) => err.message)).to.equal('held elsewhere');
        let stopped = false;
        let stop!: () => void;
        const signal = new Promise<void>((resolve) => (stop = resolve));
        const waiting = t.db.withSession((session) =>
          takeWriterLock(t.db, session, chainId + 1, { retryMs: 60_000, stop: { requested: () => stopped, signal } }),
        );
        await sleep(50);
        stopped = true;
        stop();
        expect(await waiting, 'a stop cuts the minute-long pause short').to.equal(false);
      } finally {
        await holder.release();
      }
    });
  };
}

function twoIndexers(t: { readonly db: Db; readonly url: string | undefined }) {
  return function () {
    let devnet: Devnet;
    let secondDb: Db;
    const indexers: Indexer[] = [];

    before(async function () {
      if (!TEST_DATABASE_URL) this.skip();
      devnet = await startDevnet();
      await generate(devnet, { ops: 40, days: 1, seed: 2 });
      secondDb = await createDb({ databaseUrl: t.url!, max: 3 });
    });

    after(async () => {
      await Promise.all(indexers.map((i) => i.stop()));
      await secondDb?.close();
      await devnet?.stop();
    });

    it('lets a second process wait, then take over when the first stops', async () => {
      const tuning = { lockRetryMs: 100 };
      const first = startIndexer({ db: t.db, config: devnetConfig(devnet.rpcUrl), log: quietLogger(), tuning });
      indexers.push(first);
      await first.syncNow();
      const second = startIndexer({ db: secondDb, config: devnetConfig(devnet.rpcUrl), log: quietLogger(), tuning });
      indexers.push(second);
      let secondDone = false;
      const secondSync = second.syncNow().then(() => (secondDone = true));

      await generate(devnet, { ops: 20, days: 1, seed: 3 });
      const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
      await new Promise((r) => setTimeout(r, 500));
      expect(secondDone, 'the second indexer waits for the lock').to.equal(false);
      // This database's locks only: other databases on the same server (a bench, another suite) hold their own.
      const { rows } = await t.db.query<{ n: string }>(
        `select count(*) as n from pg_locks
         where locktype = 'advisory' and granted and database = (select oid from pg_database where datname = current_database())`,
      );
      expect(rows[0]!.n).to.equal('1');

      await first.stop();
      await secondSync;
      expect(await indexedBlock(t.db, devnet.chainId)).to.equal(head);
      const { rows: ops } = await t.db.query<{ n: string }>('select count(*) as n from user_ops');
      expect(Number(ops[0]!.n)).to.equal(devnet.truth.userOps.length);
    });
  };
}
