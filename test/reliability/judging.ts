/**
 * What every case of the reliability matrix (matrix.reliability.ts) shares: the run's plan, the
 * deployment a case breaks, and the judging of each case into a row of the matrix.
 *
 *   ✅ the API equals the chain's truth and every webhook event was delivered, without a restart;
 *   ⚠️ equal in the end, at a cost (a process crashed and was restarted, or a promise is broken and
 *      said so);
 *   ❌ wrong data, or no recovery within the bound.
 *
 * After each fault the chain keeps producing (a block every ~0.7 s, ten of them) before anything is
 * judged.
 */
import { expect } from 'chai';
import { startContinuous, type Devnet } from '../../devnet/index.js';
import { createDb, type Db } from '../../shared/db/client.js';
import { createTestDatabase } from '../helpers/db.js';
import { createMigratedDatabaseOn, startPostgresServer, type PostgresServer } from '../helpers/pgServer.js';
import { callApi } from '../faults/support/apiLoad.js';
import { apiDifference } from '../faults/support/apiTruth.js';
import { waitUntil } from '../faults/support/childProcess.js';
import { startProductOnDatabase, type ProcessName, type ProductOnDatabase } from '../faults/support/productOnDatabase.js';
import { expectedEvents } from '../webhooks/support/expectedEvents.js';

export const REDUCED = process.argv.includes('--reduced') || process.env.RELIABILITY_REDUCED === '1';
export const PLAN = REDUCED
  ? {
      ops: 60,
      burstBlocks: 250,
      latencySamples: 8,
      stallMs: 10_000,
      jumpBlocks: 100,
      databaseFaults: 1,
      badProviderS: [20, 10] as const,
    }
  : {
      ops: 150,
      burstBlocks: 400,
      latencySamples: 20,
      stallMs: 60_000,
      jumpBlocks: 100,
      databaseFaults: 4,
      badProviderS: [60, 30] as const,
    };
/** How long the API may take to equal the truth once a case's fault is over. */
export const RECOVERY_BOUND_MS = 120_000;

type Glyph = '✅' | '⚠️' | '❌';
type Row = { group: string; scenario: string; glyph: Glyph; figures: string; note: string | null };
export type Verdict = { ok: boolean; recoveryMs: number; why: string | null };

export const ms = (n: number): string => (n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`);
export const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};
export const sleep = (n: number) => new Promise((r) => setTimeout(r, n));

/** A product under test and what the cases learn of it. */
export class Deployment {
  private crashes: string[] = [];
  private watching: NodeJS.Timeout;
  private seenExits = 0;

  private constructor(
    readonly product: ProductOnDatabase,
    /** The test's own connection to the product's database (never used during an outage). */
    readonly db: Db,
    /** The private PostgreSQL server the product runs on, for the cases that break it. */
    readonly server: PostgresServer | null,
    private readonly release: () => Promise<void>,
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

  /**
   * The Procfile's processes on a new database of the shared PostgreSQL, or, with `privateServer`,
   * on a PostgreSQL server of its own that the case may pause, stop and kill.
   */
  static async start(
    name: string,
    options: { env?: (devnet: Devnet, process: ProcessName) => Record<string, string>; privateServer?: boolean } = {},
  ): Promise<Deployment> {
    let server: PostgresServer | null = null;
    let url: string;
    let drop: () => Promise<void>;
    if (options.privateServer) {
      server = await startPostgresServer();
      drop = () => server!.stop();
      url = await createMigratedDatabaseOn(server).catch(async (err: unknown) => {
        await drop();
        throw err;
      });
    } else {
      const database = await createTestDatabase();
      drop = () => database.drop();
      url = database.url!;
    }
    try {
      const product = await startProductOnDatabase(url, { ops: PLAN.ops, seed: 48, name, env: options.env });
      const db = await createDb({ databaseUrl: url, max: 2 });
      return new Deployment(product, db, server, async () => {
        await db.close();
        await drop();
      });
    } catch (err) {
      await drop();
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
    const { rows } = await this.db.query<{ indexed_block: string }>(`select indexed_block from indexer_state`);
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
  async judge(): Promise<Verdict> {
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
    await this.release();
  }
}

/** The rows of the run, the deployment of the case running, and the printed matrix. */
export class Matrix {
  private readonly rows: Row[] = [];
  private current: Deployment | undefined;

  /** Starts the deployment of a case; `stopCurrent` (after each case) stops it. */
  async deploy(...args: Parameters<typeof Deployment.start>): Promise<Deployment> {
    return (this.current = await Deployment.start(...args));
  }

  async stopCurrent(): Promise<void> {
    await this.current?.stop();
    this.current = undefined;
  }

  /**
   * Records a case's row from its judgement (`verdicts` when the case judged after each of
   * several faults, else judged now); a ❌ fails the test.
   */
  async record(
    d: Deployment,
    {
      group,
      scenario,
      figures,
      note = null,
      verdicts,
    }: { group: string; scenario: string; figures: string[]; note?: string | null; verdicts?: Verdict[] },
  ): Promise<void> {
    const judged = verdicts ?? [await d.judge()];
    const verdict: Verdict = {
      ok: judged.every((v) => v.ok),
      recoveryMs: Math.max(...judged.map((v) => v.recoveryMs)),
      why: judged.find((v) => !v.ok)?.why ?? null,
    };
    const crashes = d.takeCrashes();
    const glyph: Glyph = !verdict.ok ? '❌' : crashes.length > 0 || note ? '⚠️' : '✅';
    const why = [note, ...crashes.map((c) => `crashed and restarted: ${c}`), verdict.why].filter(Boolean).join('; ');
    const equal =
      judged.length > 1 ? `equal to the chain at most ${ms(verdict.recoveryMs)}` : `equal to the chain ${ms(verdict.recoveryMs)}`;
    this.rows.push({
      group,
      scenario,
      glyph,
      figures: [...figures, `${equal} after the last block`].join(', '),
      note: why || null,
    });
    expect(verdict.ok, `${scenario}: ${verdict.why}`).to.equal(true);
  }

  print(): void {
    if (this.rows.length === 0) return;
    const notes: string[] = [];
    const lines = ['| group | scenario | result | figures |', '|---|---|---|---|'];
    for (const r of this.rows) {
      const mark = r.note ? ` ${notes.push(r.note)}` : '';
      lines.push(`| ${r.group} | ${r.scenario} | ${r.glyph}${mark} | ${r.figures} |`);
    }
    const score = this.rows.filter((r) => r.glyph === '✅').length;
    process.stdout.write(`\n${lines.join('\n')}\n\n${score}/${this.rows.length} ✅${notes.map((n, i) => `\n${i + 1}. ${n}`).join('')}\n\n`);
  }
}
