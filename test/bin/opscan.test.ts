import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import request from 'supertest';
import { generate, startDevnet, type Devnet } from '../../devnet/index.js';
import { startIndexer, type Indexer } from '../../indexer/index.js';
import { indexerEnvSchema, loadConfig } from '../../shared/config.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import { createLogger } from '../../shared/log.js';
import { createTestApp, createTestKey } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';

const run = promisify(execFile);

describe('opscan CLI', function () {
  this.timeout(300_000);
  const t = useTestDb();
  let devnet: Devnet;
  let env: Record<string, string>;

  /** `opscan ARGS` as an operator runs it, against this file's database and devnet. */
  async function opscan(...args: string[]): Promise<{ stdout: string; stderr: string; code: number }> {
    try {
      const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'bin/opscan.ts', ...args], {
        env: { ...process.env, ...env },
      });
      return { stdout, stderr, code: 0 };
    } catch (error) {
      const e = error as { stdout: string; stderr: string; code: number };
      return { stdout: e.stdout, stderr: e.stderr, code: e.code };
    }
  }

  const indexerConfig = () => loadConfig(indexerEnvSchema, { NETWORKS: 'devnet', RPC_URL_DEVNET: devnet.rpcUrl, START_BLOCK_DEVNET: '0' });
  const startTestIndexer = (): Indexer =>
    startIndexer({ db: t.db, config: indexerConfig(), log: createLogger({ level: 'silent', name: 'indexer' }) });
  /** Everything a re-index must reproduce: every op with its fields, and the daily aggregates. */
  const snapshot = async () => ({
    ops: (
      await t.db.query(`select user_op_hash, block_number, success, actual_gas_cost, sender from user_ops order by block_number, log_index`)
    ).rows,
    days: (await t.db.query(`select * from daily_stats order by chain_id, day`)).rows,
    accounts: (await t.db.query(`select * from accounts order by chain_id, address`)).rows,
  });

  before(async function () {
    if (!t.url) this.skip(); // the CLI is another process: it needs a PostgreSQL it can reach
    devnet = await startDevnet();
    await generate(devnet, { ops: 30, days: 2, seed: 3 });
    env = { DATABASE_URL: t.url, NETWORKS: 'devnet', RPC_URL_DEVNET: devnet.rpcUrl, LOG_LEVEL: 'silent', LOG_FORMAT: 'json' };
    const indexer = startTestIndexer();
    await indexer.syncNow();
    await indexer.stop();
  });
  after(async () => {
    await devnet?.stop();
  });

  it('has --help for every command and says what to do on a mistake', async () => {
    const top = await opscan('--help');
    expect(top.code).to.equal(0);
    for (const command of ['keys', 'plans', 'usage', 'status', 'backfill', 'webhooks', 'migrate']) {
      expect(top.stdout, command).to.include(command);
      const help = await opscan(command, '--help');
      expect(help.code, command).to.equal(0);
      expect(help.stdout, command).to.match(new RegExp(`^usage: opscan ${command}`));
    }
    const unknown = await opscan('frobnicate');
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.include('unknown command "frobnicate"').and.include('usage: opscan');
    const badFlag = await opscan('status', '--colour');
    expect(badFlag.code).to.equal(2);
    expect(badFlag.stderr).to.include("Unknown option '--colour'").and.include('usage: opscan status');
  });

  it('migrate: the database is up to date', async () => {
    const res = await opscan('migrate');
    expect(res.code).to.equal(0);
    expect(res.stdout.trim()).to.equal('The database is up to date.');
  });

  it('status: head, indexed block, lag and backfill per network; webhook deliveries', async () => {
    const state = (await indexerState.find(t.db, 31337))!;
    const res = await opscan('status', '--json');
    expect(res.code, res.stderr).to.equal(0);
    expect(JSON.parse(res.stdout)).to.deep.equal({
      networks: [
        {
          network: 'devnet',
          chainId: 31337,
          headBlock: state.headBlock,
          indexedBlock: state.indexedBlock,
          lagBlocks: 0,
          backfill: 'complete',
        },
      ],
      webhooks: { pending: 0, due: 0, failed: 0 },
    });
    const table = await opscan('status');
    expect(table.stdout).to.match(new RegExp(`devnet\\s+${state.headBlock}\\s+${state.indexedBlock}\\s+0\\s+complete`));
    expect(table.stdout).to.include('webhook deliveries: 0 pending (0 due now), 0 failed');
  });

  it('backfill: refuses while an indexer holds the network, then re-indexes the range to the same data', async () => {
    const before = await snapshot();
    const state = (await indexerState.find(t.db, 31337))!;
    const from = Math.max(1, state.indexedBlock - 8);
    const to = state.indexedBlock - 3;

    const indexer = startTestIndexer();
    await indexer.syncNow();
    const refused = await opscan('backfill', '--network', 'devnet', '--from', String(from), '--to', String(to));
    await indexer.stop();
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.include('An indexer of devnet is running').and.include('--wait');

    const res = await opscan('backfill', '--network', 'devnet', '--from', String(from), '--to', String(to));
    expect(res.code, res.stderr).to.equal(0);
    expect(res.stdout).to.include(`Backfilled devnet blocks ${from}–${to}`);
    // Up to --to; the rest of the removed range is the indexer's again.
    expect((await indexerState.find(t.db, 31337))!.indexedBlock).to.equal(to);
    const resumed = startTestIndexer();
    await resumed.syncNow();
    await resumed.stop();
    expect(await snapshot()).to.deep.equal(before);

    for (const [args, message] of [
      [['--network', 'devnet'], 'needs --network NAME and --from BLOCK'],
      [['--network', 'mainnet', '--from', '1'], 'mainnet is not a configured network'],
      [['--network', 'devnet', '--from', String(state.indexedBlock + 100)], 'the indexer will get there by itself'],
      [['--network', 'devnet', '--from', '5', '--to', '2'], '--to must not be below --from'],
    ] as const) {
      const bad = await opscan('backfill', ...args);
      expect(bad.code, args.join(' ')).to.not.equal(0);
      expect(bad.stderr, args.join(' ')).to.include(message);
    }
  });

  it('webhooks: list, disable (pending deliveries cancelled), enable, replay', async () => {
    const key = await createTestKey(t.db, 'hooks');
    const created = await request(createTestApp(t.db))
      .get('/v0/createWebhook')
      .query({
        webhookUrl: 'https://hooks.example.com/opscan',
        filter: 'ADDRESS',
        identifier: '0x1111111111111111111111111111111111111111',
        chainId: '31337',
        apiName: 'mine',
      })
      .set('x-api-key', key);
    expect(created.status, created.text).to.equal(200);
    const id: string = created.body.webhook.id;
    await webhookDeliveries.insertMany(t.db, [
      { id: 'msg_cli_pending', webhookId: id, eventKey: 'k1', eventType: 'webhook.test', chainId: 31337, userOpHash: null, body: '{}' },
    ]);

    const listed = await opscan('webhooks', 'list');
    expect(listed.stdout).to.include(id).and.include('enabled').and.include('https://hooks.example.com/opscan');

    expect((await opscan('webhooks', 'disable', id)).code).to.equal(0);
    let row = (
      await t.db.query<{ status: string; disabled_reason: string }>(`select status, disabled_reason from webhooks where id = $1`, [id])
    ).rows[0];
    expect(row).to.deep.equal({ status: 'disabled', disabled_reason: 'operator' });
    expect((await webhookDeliveries.findById(t.db, 'msg_cli_pending'))!.status).to.equal('cancelled');
    expect((await opscan('webhooks', 'list', '--json')).stdout).to.include('"disabledReason": "operator"');

    expect((await opscan('webhooks', 'enable', id)).code).to.equal(0);
    row = (
      await t.db.query<{ status: string; disabled_reason: string }>(`select status, disabled_reason from webhooks where id = $1`, [id])
    ).rows[0];
    expect(row).to.deep.equal({ status: 'enabled', disabled_reason: null });

    const replayed = await opscan('webhooks', 'replay', 'msg_cli_pending');
    expect(replayed.code, replayed.stderr).to.equal(0);
    expect((await webhookDeliveries.findById(t.db, 'msg_cli_pending'))!.status).to.equal('pending');
    const status = JSON.parse((await opscan('status', '--json')).stdout);
    expect(status.webhooks).to.deep.equal({ pending: 1, due: 1, failed: 0 });

    const missing = await opscan('webhooks', 'replay', 'msg_nothere');
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include('No delivery msg_nothere');
    expect((await opscan('webhooks', 'disable', 'wh_nothere')).stderr).to.include('No webhook wh_nothere');
  });
});
