/**
 * The indexer field's shared reliability scenarios (restart recovery, reorg shapes, hostile values,
 * head latency, a stalled chain), run against opscan as the Procfile runs it: web, indexer and
 * dispatcher as OS processes on a PostgreSQL database, the devnet producing, a webhook receiver
 * subscribed to the busiest bundler. Each case is judged as the field judges it:
 *
 *   ✅ the API equals the chain's truth and every webhook event was delivered, without a restart;
 *   ⚠️ equal in the end, at a cost (a process crashed and was restarted, or a promise is broken and
 *      said so);
 *   ❌ wrong data, or no recovery within the bound.
 *
 * After each fault the chain keeps producing (a block every ~0.7 s, ten of them) before anything is
 * judged. The matrix is printed at the end with numbered notes and the figures behind each glyph.
 *
 *   npm run test:reliability                 the full run
 *   npm run test:reliability -- --reduced    CI's shorter run (fewer kills, blocks and samples)
 */
import { expect } from 'chai';
import { mineTrafficBlock, reorg, startContinuous, type Devnet } from '../../devnet/index.js';
import { Random } from '../../devnet/random.js';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { callApi } from '../faults/support/apiLoad.js';
import { apiDifference } from '../faults/support/apiTruth.js';
import { waitUntil } from '../faults/support/childProcess.js';
import { startProductOnDatabase, type ProcessName, type ProductOnDatabase } from '../faults/support/productOnDatabase.js';
import { expectedEvents } from '../webhooks/support/expectedEvents.js';
import { MAX_UINT256, deployToken, mintPlain, plainRevertAccounts, transferInOp } from '../indexer/support/hostileChain.js';

const REDUCED = process.argv.includes('--reduced') || process.env.RELIABILITY_REDUCED === '1';
const PLAN = REDUCED
  ? { ops: 60, burstBlocks: 250, latencySamples: 8, stallMs: 10_000, jumpBlocks: 100 }
  : { ops: 150, burstBlocks: 400, latencySamples: 20, stallMs: 60_000, jumpBlocks: 100 };
/** How long the API may take to equal the truth once a case's fault is over. */
const RECOVERY_BOUND_MS = 120_000;

type Glyph = '✅' | '⚠️' | '❌';
type Row = { group: string; scenario: string; glyph: Glyph; figures: string; note: string | null };

const ms = (n: number): string => (n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`);
const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/** A product under test and what the cases learn of it. */
class Deployment {
  private crashes: string[] = [];
  private watching: NodeJS.Timeout;
  private seenExits = 0;

  constructor(
    readonly product: ProductOnDatabase,
    private readonly database: TestDatabase,
  ) {
    // A process that dies by itself is started again (as a platform would), and costs a ⚠️.
    this.watching = setInterval(() => {
      for (; this.seenExits < product.exits.length; this.seenExits++) {
        const exit = product.exits[this.seenExits]!;
        const name = exit.split(' ')[0] as ProcessName;
        this.crashes.push(exit.split('\n')[0]!);
        product.restart(name);
      }
    }, 200);
  }

  static async start(name: string, env?: (devnet: Devnet, process: ProcessName) => Record<string, string>): Promise<Deployment> {
    const database = await createTestDatabase();
    try {
      return new Deployment(await startProductOnDatabase(database.url!, { ops: PLAN.ops, seed: 48, name, env }), database);
    } catch (err) {
      await database.drop();
      throw err;
    }
  }

  get devnet(): Devnet {
    return this.product.devnet;
  }

  /** Crashes since the last call. */
  takeCrashes(): string[] {
    return this.crashes.splice(0);
  }

  /** The indexer's cursor, read from the database (the API's view of it is up to a second old). */
  async indexedBlock(): Promise<number> {
    const { rows } = await this.database.db.query<{ indexed_block: string }>(`select indexed_block from indexer_state`);
    return rows[0] ? Number(rows[0].indexed_block) : -1;
  }

  async status(): Promise<{ indexedBlock: number; headBlock: number }> {
    const { body } = await callApi(this.product.webUrl, this.product.key, '/v0/getNetworkStatus?network=devnet');
    return body as { indexedBlock: number; headBlock: number };
  }

  async head(): Promise<number> {
    return Number(await this.devnet.rpc.call<string>('eth_blockNumber'));
  }

  /**
   * The judgement after a fault: ten blocks ~0.7 s apart, then the API must equal the truth and
   * every webhook event of the truth be delivered, within RECOVERY_BOUND_MS.
   */
  async judge(): Promise<{ ok: boolean; recoveryMs: number; why: string | null }> {
    const traffic = startContinuous(this.devnet, { intervalMs: 700, opsPerTick: 2, seed: this.devnet.truth.userOps.length });
    await sleep(7_000);
    await traffic.stop();
    const t0 = performance.now();
    let why: string | null = 'not judged';
    const expected = expectedEvents(this.devnet.truth, 'BUNDLER', this.product.bundler);
    const delivered = (): Set<string> =>
      new Set(
        [...this.product.receiver.delivered().values()].map((r) => {
          const body = JSON.parse(r.body) as { type: string; data: { userOp?: { userOpHash: string }; userOpHash?: string } };
          return `${body.type}:${body.data.userOp?.userOpHash ?? body.data.userOpHash}`;
        }),
      );
    try {
      await waitUntil(
        'the API and the webhooks to equal the truth',
        async () => {
          why = await apiDifference(this.product.webUrl, this.product.key, this.devnet.truth);
          if (why) return false;
          const got = delivered();
          const missing = [...expected].filter((e) => !got.has(e));
          why = missing.length > 0 ? `${missing.length} webhook events not delivered, e.g. ${missing[0]}` : null;
          return why === null;
        },
        RECOVERY_BOUND_MS,
      );
      return { ok: true, recoveryMs: performance.now() - t0, why: null };
    } catch {
      return { ok: false, recoveryMs: performance.now() - t0, why };
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.watching);
    await this.product.stop();
    await this.database.drop();
  }
}

describe(`the field's reliability scenarios${REDUCED ? ' (reduced run)' : ''}`, function () {
  this.timeout(REDUCED ? 1_200_000 : 3_600_000);
  const rows: Row[] = [];
  let current: Deployment | undefined;

  before(function () {
    if (!TEST_DATABASE_URL) this.skip(); // the processes share one PostgreSQL
  });
  afterEach(async () => {
    await current?.stop();
    current = undefined;
  });
  after(() => {
    if (rows.length === 0) return;
    const notes: string[] = [];
    const lines = ['| group | scenario | result | figures |', '|---|---|---|---|'];
    for (const r of rows) {
      const mark = r.note ? ` ${notes.push(r.note)}` : '';
      lines.push(`| ${r.group} | ${r.scenario} | ${r.glyph}${mark} | ${r.figures} |`);
    }
    const score = rows.filter((r) => r.glyph === '✅').length;
    process.stdout.write(`\n${lines.join('\n')}\n\n${score}/${rows.length} ✅${notes.map((n, i) => `\n${i + 1}. ${n}`).join('')}\n\n`);
  });

  /** Records a case's row from its judgement; a ❌ fails the test. */
  async function record(
    d: Deployment,
    { group, scenario, figures, note = null }: { group: string; scenario: string; figures: string[]; note?: string | null },
  ): Promise<void> {
    const verdict = await d.judge();
    const crashes = d.takeCrashes();
    const glyph: Glyph = !verdict.ok ? '❌' : crashes.length > 0 || note ? '⚠️' : '✅';
    const why = [note, ...crashes.map((c) => `crashed and restarted: ${c}`), verdict.why].filter(Boolean).join('; ');
    rows.push({
      group,
      scenario,
      glyph,
      figures: [...figures, `equal to the chain ${ms(verdict.recoveryMs)} after the last block`].join(', '),
      note: why || null,
    });
    expect(verdict.ok, `${scenario}: ${verdict.why}`).to.equal(true);
  }

  it('restart recovery: the indexer SIGKILLed after its first writes, twice inside a burst, once at the head while blocks arrive', async () => {
    const d = (current = await Deployment.start('reliability restarts'));
    const rng = new Random(481);
    const kills: string[] = [];
    const killAt = async (label: string, until: (indexedBlock: number) => boolean): Promise<void> => {
      let indexedBlock = -1;
      await waitUntil(`the indexer to reach ${label}`, async () => until((indexedBlock = await d.indexedBlock())), 120_000);
      await d.product.kill('indexer');
      kills.push(`${label}: killed at block ${indexedBlock} of ${await d.head()}`);
      d.product.restart('indexer');
    };
    // A burst of blocks released at once while the indexer is down: it finds them all at its start.
    await d.product.kill('indexer');
    const from = await d.head();
    for (let i = 0; i < PLAN.burstBlocks; i++) await mineTrafficBlock(d.devnet, rng, 2);
    const to = await d.head();
    d.product.restart('indexer');
    await killAt('after its first writes', (b) => b > from);
    await killAt('a third into the burst', (b) => b >= from + Math.floor((to - from) / 3));
    await killAt('two thirds into the burst', (b) => b >= from + Math.floor((2 * (to - from)) / 3));
    await waitUntil('the indexer at the head', async () => (await d.indexedBlock()) >= to, 120_000);
    // At the head, dead while blocks keep arriving.
    await d.product.kill('indexer');
    const dead = await d.head();
    for (let i = 0; i < 5; i++) await mineTrafficBlock(d.devnet, rng, 2);
    kills.push(`at the head: killed at block ${dead}, ${(await d.head()) - dead} blocks mined while dead`);
    d.product.restart('indexer');
    await record(d, { group: 'restart', scenario: `SIGKILL ×4 (${to - from}-block burst)`, figures: kills });
  });

  it('reorgs of every shape: tip, 3 and 12 deep, shortening, repeated, during backfill, beyond finality', async () => {
    const d = (current = await Deployment.start('reliability reorgs'));
    const rng = new Random(482);
    const cases: Array<[string, () => Promise<string>]> = [
      ['tip (1 deep)', async () => `${(await reorg(d.devnet, 1, { seed: 1 })).removedUserOpHashes.length} ops removed`],
      ['3 deep', async () => `${(await reorg(d.devnet, 3, { seed: 3 })).removedUserOpHashes.length} ops removed`],
      ['12 deep', async () => `${(await reorg(d.devnet, 12, { seed: 12 })).removedUserOpHashes.length} ops removed`],
      [
        'shortening (6 blocks replaced by fewer)',
        async () => {
          const before = await d.head();
          const r = await reorg(d.devnet, 6, { seed: 6, length: 3 });
          return `head ${before} → ${await d.head()}, ${r.removedUserOpHashes.length} ops removed`;
        },
      ],
      [
        'repeated (3 reorgs 600 ms apart)',
        async () => {
          let removed = 0;
          for (let i = 0; i < 3; i++) {
            removed += (await reorg(d.devnet, 3, { seed: 30 + i })).removedUserOpHashes.length;
            await sleep(600);
          }
          return `${removed} ops removed`;
        },
      ],
      [
        'during backfill (~80 blocks behind, unread blocks rewritten)',
        async () => {
          d.product.signal('indexer', 'SIGSTOP');
          for (let i = 0; i < 80; i++) await mineTrafficBlock(d.devnet, rng, 1);
          const behind = (await d.head()) - (await d.status()).indexedBlock;
          const r = await reorg(d.devnet, 10, { seed: 80 });
          d.product.signal('indexer', 'SIGCONT');
          return `${behind} blocks behind, ${r.removedUserOpHashes.length} unread ops rewritten`;
        },
      ],
    ];
    for (const [scenario, run] of cases) {
      await waitUntil('the indexer at the head', async () => (await d.status()).indexedBlock >= (await d.head()), 120_000);
      const figure = await run();
      await record(d, { group: 'reorg', scenario, figures: [figure] });
    }
    // Deeper than the reorg window (finality depth + margin: 64 blocks on the devnet): no indexer
    // can repair what it no longer keeps the headers of. Reported, never silent.
    await waitUntil('the indexer at the head', async () => (await d.status()).indexedBlock >= (await d.head()), 120_000);
    while ((await d.head()) < 75) await mineTrafficBlock(d.devnet, rng, 1);
    const deep = await reorg(d.devnet, 70, { seed: 70 });
    await record(d, {
      group: 'reorg',
      scenario: 'beyond finality (70 deep, window 64)',
      figures: [`${deep.removedUserOpHashes.length} ops removed`],
    });
  });

  it('hostile values: a NUL in a symbol, an emoji, tab and newline in a name, a transfer of 2²⁵⁶−1', async () => {
    const d = (current = await Deployment.start('reliability hostile'));
    const [holder, receiver] = plainRevertAccounts(d.devnet);
    const token = await deployToken(d.devnet, 'emoji 🦄\ttab\nnewline', 'H\u0000X');
    await mintPlain(d.devnet, token, holder!.address, MAX_UINT256);
    const op = await transferInOp(d.devnet, holder!, { token, to: receiver!.address, amount: MAX_UINT256 });
    await waitUntil('the transfer indexed', async () => (await d.status()).indexedBlock >= (await d.head()), 60_000);
    const { body } = await callApi(
      d.product.webUrl,
      d.product.key,
      `/v0/getAddressERC20Transfers?network=devnet&address=${receiver!.address}&first=100`,
    );
    const mine = (body as Array<{ userOpHash: string; asset: string; rawContract: { address: string; value: string } }>).filter(
      (t) => t.rawContract.address === token,
    );
    expect(mine.map((t) => [t.userOpHash, t.asset, BigInt(t.rawContract.value)])).to.deep.equal([[op, 'HX', MAX_UINT256]]);
    await record(d, {
      group: 'hostile values',
      scenario: 'NUL symbol, emoji/tab/newline name, 2²⁵⁶−1',
      figures: ['symbol stored "HX" (NUL removed), name and amount exact'],
    });
  });

  for (const transport of ['poll (default)', 'WebSocket'] as const) {
    it(`head latency over ${PLAN.latencySamples} blocks 2 s apart, ${transport}: mined → readable in the API`, async () => {
      const d = (current = await Deployment.start(
        `reliability latency ${transport}`,
        // INDEXER_POLL_INTERVAL_MS at its default (the suite's processes poll faster).
        (devnet) => ({
          INDEXER_POLL_INTERVAL_MS: '2000',
          ...(transport === 'WebSocket' ? { RPC_WS_URL_DEVNET: devnet.rpcUrl.replace(/^http/, 'ws') } : {}),
        }),
      ));
      const rng = new Random(483);
      const samples: number[] = [];
      for (let i = 0; i < PLAN.latencySamples; i++) {
        await sleep(2_000);
        const block = await mineTrafficBlock(d.devnet, rng, 1);
        const hash = d.devnet.truth.userOps.find((o) => o.blockNumber === block!.number)?.userOpHash;
        if (!hash) continue;
        await waitUntil(
          'the op readable',
          async () => {
            const { body } = await callApi(d.product.webUrl, d.product.key, `/v0/getUserOp?network=devnet&hash=${hash}`);
            return ((body as { userOps?: unknown[] }).userOps ?? []).length > 0;
          },
          30_000,
        );
        samples.push(Date.now() - block!.minedAtMs);
      }
      const figures = [`median ${ms(quantile(samples, 0.5))}`, `p95 ${ms(quantile(samples, 0.95))}`, `max ${ms(Math.max(...samples))}`];
      await record(d, { group: 'head latency', scenario: transport, figures });
    });
  }

  it(`a chain that stalls, then jumps ${PLAN.jumpBlocks} blocks`, async () => {
    const d = (current = await Deployment.start('reliability stall'));
    await sleep(PLAN.stallMs);
    const from = await d.head();
    await d.devnet.rpc.call('anvil_mine', [`0x${PLAN.jumpBlocks.toString(16)}`]);
    const t0 = performance.now();
    await waitUntil('the indexer past the jump', async () => (await d.status()).indexedBlock >= from + PLAN.jumpBlocks, 120_000);
    await record(d, {
      group: 'stall and jump',
      scenario: `stalled ${ms(PLAN.stallMs)}, then +${PLAN.jumpBlocks} blocks`,
      figures: [`caught up ${ms(performance.now() - t0)} after the jump`],
    });
  });
});
