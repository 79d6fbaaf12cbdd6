/**
 * An indexer killed with SIGKILL at random points of its backfill (a child process, so the kill
 * is real: no shutdown hook runs, transactions are cut mid-way) and restarted each time ends with
 * exactly the data of an uninterrupted run: the ground truth, no op or event written twice.
 * Needs PostgreSQL (two processes share the database).
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { generate, startDevnet, type Devnet } from '../../devnet/index.js';
import { TEST_DATABASE_URL, useTestDb } from '../helpers/db.js';
import { Random } from '../../devnet/random.js';
import { expectMatchesTruth } from './storedTruth.js';
import { indexedBlock } from './support.js';

const CHILD = fileURLToPath(new URL('./indexerProcess.ts', import.meta.url));
const KILLS = 6;

function startChild(dbUrl: string, rpcUrl: string): { child: ChildProcess; ready: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dbUrl, rpcUrl, '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (process.env.CRASH_DEBUG) process.stderr.write(chunk);
      if (chunk.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`indexer child exited early (${code})`)));
  });
  ready.catch(() => undefined);
  return { child, ready };
}

function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

describe('indexer killed during backfill', function () {
  this.timeout(300_000);
  const t = useTestDb();
  let devnet: Devnet;
  const children: ChildProcess[] = [];

  before(async function () {
    if (!TEST_DATABASE_URL) this.skip();
    devnet = await startDevnet();
    await generate(devnet, { ops: 400, days: 2, seed: 3, layout: { maxBundlesPerBlock: 2, maxOpsPerBundle: 5 } });
  });

  after(async () => {
    await Promise.all(children.map(kill));
    await devnet?.stop();
  });

  it('resumes from its cursor after each SIGKILL and ends equal to an uninterrupted run', async () => {
    const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
    const rng = new Random(42);
    const progress: number[] = [];
    let kills = 0;
    while (kills < KILLS && (await indexedBlock(t.db, devnet.chainId)) < head) {
      const { child, ready } = startChild(t.url!, devnet.rpcUrl);
      children.push(child);
      await ready;
      // Killed at a random moment after its first commit, so every run moves the cursor a little.
      const before = await indexedBlock(t.db, devnet.chainId);
      const deadline = Date.now() + 60_000;
      while ((await indexedBlock(t.db, devnet.chainId)) === before) {
        if (Date.now() > deadline)
          throw new Error(
            `restart ${kills + 1} made no progress from block ${before} (child ${child.exitCode === null ? 'alive' : `exited ${child.exitCode}`})`,
          );
        await new Promise((r) => setTimeout(r, 5));
      }
      await new Promise((r) => setTimeout(r, rng.int(0, 150)));
      await kill(child);
      kills++;
      progress.push(await indexedBlock(t.db, devnet.chainId));
      if (process.env.CRASH_DEBUG) console.log('killed at', progress.at(-1), 'of', head);
    }
    expect(kills, `kills before the backfill finished (cursor after each: ${progress.join(', ')})`).to.be.greaterThan(2);

    const { child, ready } = startChild(t.url!, devnet.rpcUrl);
    children.push(child);
    await ready;
    const deadline = Date.now() + 120_000;
    // At the head, and done with the transfer backfill of the addresses that became known
    // (INDEXER_TRANSFERS=known reads their earlier token logs once the head is reached).
    const pendingBackfill = async (): Promise<number> =>
      Number(
        (
          await t.db.query<{ n: string }>('select count(*) as n from known_addresses where chain_id = $1 and backfilled_to is null', [
            devnet.chainId,
          ])
        ).rows[0]!.n,
      );
    while ((await indexedBlock(t.db, devnet.chainId)) < head || (await pendingBackfill()) > 0) {
      if (Date.now() > deadline) throw new Error('the restarted indexer did not reach the head');
      await new Promise((r) => setTimeout(r, 100));
    }
    await kill(child);

    await expectMatchesTruth(t.db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
    const { rows } = await t.db.query<{ type: string; n: string; distinct_ops: string }>(
      `select type, count(*) as n, count(distinct user_op_hash) as distinct_ops from outbox_events where chain_id = $1 group by type order by type`,
      [devnet.chainId],
    );
    expect(rows).to.deep.equal([
      { type: 'account_deployed', n: String(devnet.truth.accounts.length), distinct_ops: String(devnet.truth.accounts.length) },
      { type: 'user_operation', n: String(devnet.truth.userOps.length), distinct_ops: String(devnet.truth.userOps.length) },
    ]);
    // INDEXER_TRACES=needed: the ops of the transactions hiding their calldata (traced), each once.
    const hidden = new Set(devnet.truth.calldataOnlyInTraces);
    const { rows: traces } = await t.db.query<{ n: string }>('select count(*) as n from user_op_traces where chain_id = $1', [
      devnet.chainId,
    ]);
    expect(Number(traces[0]!.n)).to.equal(devnet.truth.userOps.filter((o) => hidden.has(o.transactionHash)).length);
  });
});
