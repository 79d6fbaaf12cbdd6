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

type DayRow = { day: number; active_wallet_list: string | null; live: string | null };

describe('persist: the stored active wallets of past days', () => {
  const t = useTestDb();

  const days = async (): Promise<DayRow[]> =>
    (
      await t.db.query<DayRow>(
        `select d.day, d.active_wallet_list,
                (select string_agg(w.address, ',' order by w.address) from daily_active_wallets w where w.chain_id = d.chain_id and w.day = d.day) as live
         from daily_stats d where d.chain_id = $1 order by d.day`,
        [BENCH_CHAIN_ID],
      )
    ).rows;

  /** Every day but the latest holds its wallets in address order; the latest holds none yet. */
  const expectClosedBeforeLatest = (rows: DayRow[]) => {
    for (const r of rows.slice(0, -1)) expect(r.active_wallet_list, `day ${r.day}`).to.equal(r.live ?? '');
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
});
