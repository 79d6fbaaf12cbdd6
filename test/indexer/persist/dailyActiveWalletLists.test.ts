/**
 * daily_stats.active_wallet_list (what getDailyMetrics reads for a past day): the indexer stores a
 * day's list once it writes a later day, a reorg rollback reopens the day it rebuilds, and indexing
 * forward again stores the rebuilt day's list. Synthetic blocks through persistBatch (the API
 * benchmark's generator: 40 ops per block, a UTC day every ~69 blocks).
 */
import { expect } from 'chai';
import { BENCH_CHAIN_ID, loadUserOps } from '../../../bench/apiData.js';
import { rollbackTo } from '../../../indexer/index.js';
import { useTestDb } from '../../helpers/db.js';
import { testConfig } from '../../helpers/app.js';
import { getDailyMetrics } from '../../../server/endpoints/getDailyMetrics.js';
import { toJsonBody } from '../../../shared/jsonText.js';
import { bytea } from '../../../shared/db/client.js';

/** The stored list and the live one: the addresses' bytes one after the other, read as 0x-hex. */
type DayRow = { day: number; active_wallet_list: string | null; live: string | null };

/** A list's addresses, in its order. */
const addressesOf = (list: string): string[] => (list.slice(2).match(/.{40}/g) ?? []).map((hex) => `0x${hex}`);
/** Addresses as one list's bytes. */
const listOf = (addresses: string[]): string => bytea(`0x${addresses.map((a) => a.slice(2)).join('')}`);

describe('persist: the stored active wallets of past days', () => {
  const t = useTestDb();

  const days = async (): Promise<DayRow[]> =>
    (
      await t.db.query<DayRow>(
        `select d.day, d.active_wallet_list,
                (select string_agg(w.address, ''::bytea order by w.address) from daily_active_wallets w where w.chain_id = d.chain_id and w.day = d.day) as live
         from daily_stats d where d.chain_id = $1 order by d.day`,
        [BENCH_CHAIN_ID],
      )
    ).rows;

  /** Every day but the latest holds its wallets in address order; the latest holds none yet. */
  const expectClosedBeforeLatest = (rows: DayRow[]) => {
    for (const r of rows.slice(0, -1)) expect(r.active_wallet_list, `day ${r.day}`).to.equal(r.live ?? '0x');
    expect(rows.at(-1)!.active_wallet_list).to.equal(null);
  };

  it('stores a day once a later one is written, reopens the days a rollback rebuilds, and stores them again', async () => {
    const sample = { userOpHashes: [], senders: [] };
    await loadUserOps(t.db, 200 * 40, sample);
    const indexed = await days();
    expect(indexed.map((d) => d.day)).to.have.length(3);
    expectClosedBeforeLatest(indexed);

    // Block 100 is in the second day: the third goes, the second is rebuilt and is the latest again.
    await rollbackTo(t.db, BENCH_CHAIN_ID, { number: 100, hash: `0x${(101).toString(16).padStart(64, '0')}` });
    const rolledBack = await days();
    expect(rolledBack.map((d) => d.day)).to.deep.equal(indexed.slice(0, 2).map((d) => d.day));
    expectClosedBeforeLatest(rolledBack);

    await loadUserOps(t.db, 200 * 40, sample);
    const again = await days();
    expect(again.map((d) => d.day)).to.deep.equal(indexed.map((d) => d.day));
    expectClosedBeforeLatest(again);
  });

  it('getDailyMetrics answers every day as stored, from the lists it holds until a reorg or a new wallet changes them', async () => {
    const sample = { userOpHashes: [], senders: [] };
    await loadUserOps(t.db, 200 * 40, sample);
    // What the handler reads of a request's context: the database and the served networks.
    const ctx = { db: t.db, config: testConfig() } as unknown as Parameters<typeof getDailyMetrics.handler>[0];
    const answer = async (noOfDays = 366) =>
      JSON.parse(toJsonBody(await getDailyMetrics.handler(ctx, { network: 'devnet', noOfDays })).toString()) as {
        metrics: Array<{ daySinceEpoch: string; activeWallets: string[]; activeWalletsDaily: string }>;
      };
    const expectAsStored = async () => {
      const stored = (await days()).reverse();
      const { metrics } = await answer();
      expect(metrics.map((m) => Number(m.daySinceEpoch))).to.deep.equal(stored.map((d) => d.day));
      for (const [i, m] of metrics.entries()) {
        expect(m.activeWallets, m.daySinceEpoch).to.deep.equal(addressesOf(stored[i]!.live ?? '0x'));
        expect(m.activeWalletsDaily).to.equal(String(m.activeWallets.length));
      }
      return metrics;
    };

    const first = await expectAsStored();
    // Fewer days: the latest ones, their running totals as in the whole history.
    for (const noOfDays of [1, 2]) expect((await answer(noOfDays)).metrics).to.deep.equal(first.slice(0, noOfDays));
    // The read values are the plain ones too (tRPC and in-process callers read the fields).
    const values = (await getDailyMetrics.handler(ctx, { network: 'devnet', noOfDays: 366 })).metrics;
    expect(values.map((m) => m.activeWallets)).to.deep.equal(first.map((m) => m.activeWallets));

    // Held: a day's list is not read again while its count and the epoch stay. The
    // oldest day's list is stored reversed (same count): it is answered as first read until the
    // epoch moves, then as stored.
    const oldest = first.at(-1)!;
    const reversed = [...oldest.activeWallets].reverse();
    await t.db.query(`update daily_stats set active_wallet_list = $3 where chain_id = $1 and day = $2`, [
      BENCH_CHAIN_ID,
      Number(oldest.daySinceEpoch),
      listOf(reversed),
    ]);
    expect((await answer()).metrics.at(-1)!.activeWallets).to.deep.equal(oldest.activeWallets);

    // A reorg moves the epoch (here it rebuilds the two latest days): every list is read again.
    await rollbackTo(t.db, BENCH_CHAIN_ID, { number: 100, hash: `0x${(101).toString(16).padStart(64, '0')}` });
    expect((await answer()).metrics.at(-1)!.activeWallets).to.deep.equal(reversed);
    await t.db.query(`update daily_stats set active_wallet_list = $3 where chain_id = $1 and day = $2`, [
      BENCH_CHAIN_ID,
      Number(oldest.daySinceEpoch),
      listOf(oldest.activeWallets),
    ]);
    await rollbackTo(t.db, BENCH_CHAIN_ID, { number: 100, hash: `0x${(101).toString(16).padStart(64, '0')}` });
    await expectAsStored();
    await loadUserOps(t.db, 200 * 40, sample);
    await expectAsStored();

    // The latest day's list too: held under its count, read again once a new wallet raises it.
    const latest = (await days()).at(-1)!;
    const [firstWallet] = addressesOf(latest.live!);
    await t.db.query(`update daily_active_wallets set address = $3 where chain_id = $1 and day = $2 and address = $4`, [
      BENCH_CHAIN_ID,
      latest.day,
      bytea(`0x${'e'.repeat(40)}`),
      bytea(firstWallet!),
    ]);
    expect((await answer()).metrics[0]!.activeWallets)
      .to.include(firstWallet)
      .and.not.include(`0x${'e'.repeat(40)}`);
    await t.db.query(`insert into daily_active_wallets (chain_id, day, address) values ($1, $2, $3)`, [
      BENCH_CHAIN_ID,
      latest.day,
      bytea(`0x${'d'.repeat(40)}`),
    ]);
    await t.db.query(`update daily_stats set active_wallets = active_wallets + 1 where chain_id = $1 and day = $2`, [
      BENCH_CHAIN_ID,
      latest.day,
    ]);
    const grown = (await expectAsStored())[0]!.activeWallets;
    expect(grown)
      .to.include.members([`0x${'d'.repeat(40)}`, `0x${'e'.repeat(40)}`])
      .and.not.include(firstWallet);

    // A past day whose count changes (wallets added to it) is read again.
    const past = (await days())[0]!;
    await t.db.query(`insert into daily_active_wallets (chain_id, day, address) values ($1, $2, $3)`, [
      BENCH_CHAIN_ID,
      past.day,
      bytea(`0x${'f'.repeat(40)}`),
    ]);
    await t.db.query(
      `update daily_stats set active_wallets = active_wallets + 1, active_wallet_list = active_wallet_list || $3 where chain_id = $1 and day = $2`,
      [BENCH_CHAIN_ID, past.day, bytea(`0x${'f'.repeat(40)}`)],
    );
    const metrics = await expectAsStored();
    expect(metrics.at(-1)!.activeWallets).to.include(`0x${'f'.repeat(40)}`);
  });
});
