import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import { generate, mineTrafficBlock, startDevnet, type Devnet } from '../../devnet/index.js';
import { Random } from '../../devnet/random.js';
import { createTestKey } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';
import { freePort } from '../helpers/freePort.js';
import { MAX_UINT256, deployToken, mintPlain, plainRevertAccounts, transferInOp } from '../indexer/support/hostileChain.js';

/**
 * The three Procfile processes, each in its own OS process on one PostgreSQL: their /healthz,
 * /readyz and /metrics are scraped. From TypeScript by default; with OPSCAN_PROCESSES=dist the
 * built ones (`npm run build`, as .ci/run does), run by plain node, as the Procfile runs them.
 */
const FROM_DIST = process.env.OPSCAN_PROCESSES === 'dist';
const entry = (name: 'server/main' | 'indexer/main' | 'webhooks/main') =>
  FROM_DIST ? [`dist/${name}.js`] : ['--import', 'tsx', `${name}.ts`];

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const scrape = async (url: string) => {
  const res = await fetch(url);
  return res.ok ? res.text() : undefined;
};

describe(`Procfile processes${FROM_DIST ? ' (built)' : ''}: health, readiness, metrics`, function () {
  this.timeout(300_000);
  const children: ChildProcess[] = [];
  let devnet: Devnet | undefined;
  // Registered before useTestDb's: the processes stop before their database is dropped.
  after(async () => {
    // SIGTERM, as a platform stops a dyno: each exits 0 once it has released everything.
    const codes = await Promise.all(
      children.map(
        (c) =>
          new Promise<number | null>((resolve) =>
            c.exitCode !== null ? resolve(c.exitCode) : (c.once('exit', (code) => resolve(code)), c.kill('SIGTERM')),
          ),
      ),
    );
    await devnet?.stop();
    expect(codes).to.deep.equal(children.map(() => 0));
  });

  const t = useTestDb();
  const ports = { web: 0, indexer: 0, dispatcher: 0 };
  let key = '';
  /** A token anyone could deploy: a NUL in its symbol, 2²⁵⁶−1 minted to a known account and sent on in an op. */
  const hostile = { token: '', receiver: '', transferOp: '', transferBlock: 0 };

  before(async function () {
    if (!t.url) this.skip(); // separate processes share one PostgreSQL
    devnet = await startDevnet();
    await generate(devnet, { ops: 20, days: 1, seed: 5 });
    const [holder, receiver] = plainRevertAccounts(devnet);
    hostile.token = await deployToken(devnet, 'emoji 🦄\ttab\nnewline', 'H\u0000X');
    await mintPlain(devnet, hostile.token, holder!.address, MAX_UINT256);
    hostile.receiver = receiver!.address;
    hostile.transferOp = await transferInOp(devnet, holder!, { token: hostile.token, to: receiver!.address, amount: MAX_UINT256 });
    hostile.transferBlock = devnet.truth.userOps.at(-1)!.blockNumber;
    const rng = new Random(5);
    for (let i = 0; i < 2; i++) await mineTrafficBlock(devnet, rng, 2);
    key = await createTestKey(t.db, 'processes', 1_000_000);
    ports.web = await freePort();
    ports.indexer = await freePort();
    ports.dispatcher = await freePort();
    const env = {
      ...process.env,
      DATABASE_URL: t.url,
      NETWORKS: 'devnet',
      RPC_URL_DEVNET: devnet.rpcUrl,
      START_BLOCK_DEVNET: '0',
      LOG_LEVEL: 'warn',
      LOG_FORMAT: 'json' as const,
    };
    const start = (name: Parameters<typeof entry>[0], extra: Record<string, string>) => {
      const child = spawn(process.execPath, entry(name), { env: { ...env, ...extra }, stdio: ['ignore', 'inherit', 'inherit'] });
      children.push(child);
    };
    start('server/main', { PORT: String(ports.web), RATE_LIMIT_PER_SECOND: '1' });
    start('indexer/main', { METRICS_PORT: String(ports.indexer) });
    start('webhooks/main', { METRICS_PORT: String(ports.dispatcher) });
  });

  it('each answers /healthz and /readyz', async () => {
    for (const [name, port] of Object.entries(ports)) {
      const health = await waitFor(`${name} /healthz`, async () =>
        (await fetch(`http://127.0.0.1:${port}/healthz`)).ok ? true : undefined,
      );
      expect(health, name).to.equal(true);
      const ready = await fetch(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status, name).to.equal(200);
      expect(await ready.json(), name).to.deep.equal({ status: 'ready' });
    }
  });

  it('the indexer exports its position, throughput, RPC calls and batch write time', async () => {
    const url = `http://127.0.0.1:${ports.indexer}/metrics`;
    const text = await waitFor('the indexer to catch up', async () => {
      const body = await scrape(url);
      return body &&
        /opscan_indexer_lag_blocks\{network="devnet"\} 0\n/.test(body) &&
        /opscan_indexer_user_ops_total\{network="devnet"\} [1-9]/.test(body)
        ? body
        : undefined;
    });
    const head = Number(/opscan_indexer_head_block\{network="devnet"\} (\d+)/.exec(text)![1]);
    expect(head).to.be.greaterThan(0);
    expect(text).to.include(`opscan_indexer_indexed_block{network="devnet"} ${head}`);
    expect(text).to.include(`opscan_indexer_user_ops_total{network="devnet"} ${devnet!.truth.userOps.length}`);
    expect(text).to.match(/opscan_indexer_user_ops_per_second\{network="devnet"\} [\d.]+/);
    expect(text).to.match(/opscan_indexer_rpc_calls_total\{network="devnet",method="eth_getLogs"\} [1-9]/);
    expect(text).to.match(/opscan_indexer_rpc_calls_total\{network="devnet",method="eth_blockNumber"\} [1-9]/);
    expect(text).to.include('# TYPE opscan_indexer_rpc_errors_total counter');
    expect(text).to.match(/opscan_indexer_batch_write_seconds_count\{network="devnet"\} [1-9]/);
    expect(text).to.include('# TYPE opscan_indexer_reorgs_total counter');
    expect(text).to.include('process_cpu_seconds_total');
  });

  it('index past a token whose symbol holds a NUL: every later op is answered, its 2²⁵⁶−1 transfer listed exactly', async () => {
    const base = `http://127.0.0.1:${ports.web}/v0`;
    const get = async (path: string): Promise<any> => (await fetch(`${base}/${path}`, { headers: { 'x-api-key': key } })).json(); // eslint-disable-line @typescript-eslint/no-explicit-any
    const later = devnet!.truth.userOps.filter((o) => o.blockNumber > hostile.transferBlock);
    expect(later.length, 'ops mined after the token').to.be.greaterThan(0);
    for (const op of later) {
      const { userOps } = await get(`getUserOp?network=devnet&hash=${op.userOpHash}`);
      expect(userOps.map((o: { userOpHash: string }) => o.userOpHash)).to.deep.equal([op.userOpHash]);
    }
    const transfers = await get(`getAddressERC20Transfers?network=devnet&address=${hostile.receiver}&first=100`);
    const received = transfers.filter((x: { rawContract: { address: string } }) => x.rawContract.address === hostile.token);
    expect(
      received.map((x: { userOpHash: string; asset: string; rawContract: { value: string } }) => [
        x.userOpHash,
        x.asset,
        BigInt(x.rawContract.value),
      ]),
    ).to.deep.equal([[hostile.transferOp, 'HX', MAX_UINT256]]);
  });

  it('the dispatcher exports deliveries by outcome, attempts, queue depth and delivery latency', async () => {
    const text = (await scrape(`http://127.0.0.1:${ports.dispatcher}/metrics`))!;
    for (const outcome of ['delivered', 'retry', 'give_up', 'disable'])
      expect(text).to.include(`opscan_dispatcher_deliveries_total{outcome="${outcome}"} 0`);
    expect(text).to.include('opscan_dispatcher_attempts_total 0');
    expect(text).to.include('opscan_dispatcher_queue_depth{state="due"} 0');
    expect(text).to.include('opscan_dispatcher_queue_depth{state="waiting"} 0');
    expect(text).to.include('# TYPE opscan_dispatcher_delivery_seconds histogram');
  });

  it('web counts requests by endpoint and status with their latency, cache outcomes and rate-limit refusals', async () => {
    const base = `http://127.0.0.1:${ports.web}`;
    // Keyless calls count per address at RATE_LIMIT_PER_SECOND=1 (burst twice that): some are refused.
    const statuses = await Promise.all(Array.from({ length: 8 }, () => fetch(`${base}/v0/getStatusSummary`).then((r) => r.status)));
    expect(statuses).to.include(200).and.include(429);
    const refused = statuses.filter((s) => s === 429).length;
    expect((await fetch(`${base}/v0/getNetworks`, { headers: { 'x-api-key': key } })).status).to.equal(200);
    const text = (await scrape(`${base}/metrics`))!;
    expect(text).to.include('opscan_http_requests_total{endpoint="getNetworks",method="GET",status="200"} 1');
    expect(text).to.include(`opscan_http_requests_total{endpoint="getStatusSummary",method="GET",status="429"} ${refused}`);
    expect(text).to.include(`opscan_rate_limit_refusals_total{endpoint="getStatusSummary"} ${refused}`);
    expect(text).to.match(/opscan_http_request_duration_seconds_count\{endpoint="getNetworks",method="GET",status="200"\} 1/);
    expect(text).to.match(/opscan_cache_requests_total\{store="\w+",outcome="miss"\} [1-9]/);
    expect(text).to.match(/opscan_cache_requests_total\{store="\w+",outcome="hit"\}/);
  });
});
