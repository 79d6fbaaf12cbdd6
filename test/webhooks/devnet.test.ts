/**
 * End to end on the devnet: real EntryPoints and generated traffic → indexer → outbox → dispatcher
 * → a receiver on 127.0.0.1. For each filter kind the deliveries must be exactly the matching ops
 * of the devnet's ground truth, each signature verifying with the webhook's secret.
 */
import { expect } from 'chai';
import { generate, reorg, startDevnet, type Devnet, type GroundTruth } from '../../devnet/index.js';
import { startIndexer, type Indexer } from '../../indexer/index.js';
import { loadConfig, allInOneEnvSchema } from '../../shared/config.js';
import * as outboxDeadLetters from '../../shared/db/tables/outboxDeadLetters.js';
import { createLogger } from '../../shared/log.js';
import { expectedEvents, mostCommon } from './support/expectedEvents.js';
import { useWebhookHarness } from './support/harness.js';
import { startReceiver, verifySignature, type Receiver } from './support/receiver.js';

type Body = { type: string; webhookId: string; data: { userOp?: { userOpHash: string }; userOpHash?: string } };

describe('webhooks on the devnet (indexer + dispatcher, ground truth)', function () {
  this.timeout(300_000);
  const h = useWebhookHarness();
  let devnet: Devnet;
  let truth: GroundTruth;
  let receiver: Receiver;
  let indexer: Indexer | undefined;

  before(async () => {
    devnet = await startDevnet();
    truth = structuredClone(await generate(devnet, { ops: 250, days: 1, seed: 7 }));
  });
  after(async () => {
    await devnet?.stop();
  });
  beforeEach(async () => {
    receiver = await startReceiver();
  });
  afterEach(async () => {
    await indexer?.stop();
    await receiver.close();
  });

  it('delivers, for each filter kind, exactly the matching ops of the ground truth, signed', async () => {
    const recipient = mostCommon(truth.transfers.map((t) => t.to));
    const choices: Array<[string, string]> = [
      ['ADDRESS', mostCommon(truth.userOps.map((o) => o.sender))],
      ['ADDRESS', recipient],
      ['PAYMASTER', mostCommon(truth.userOps.map((o) => o.paymaster))],
      ['BUNDLER', mostCommon(truth.userOps.map((o) => o.bundler))],
      ['FACTORY', mostCommon(truth.accounts.map((a) => a.factory))],
    ];
    const hooks = [];
    for (const [filter, x] of choices) {
      const expected = expectedEvents(truth, filter, x);
      expect(expected.size, `${filter} ${x} matches something`).to.be.greaterThan(0);
      hooks.push({ filter, x, expected, ...(await h.createWebhook(`${receiver.url}/${filter}`, filter, x)) });
    }
    const total = hooks.reduce((n, w) => n + w.expected.size, 0);
    if (process.env.WEBHOOK_TEST_VERBOSE) console.log(hooks.map((w) => `${w.filter}=${w.expected.size}`).join(' '));

    const config = loadConfig(allInOneEnvSchema, {
      NETWORKS: 'devnet',
      RPC_URL_DEVNET: devnet.rpcUrl,
      START_BLOCK_DEVNET: '0',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'silent',
    });
    await h.startDispatcher();
    indexer = startIndexer({ db: h.db, config, log: createLogger({ level: 'silent', name: 'indexer' }) });
    await indexer.syncNow();
    await receiver.waitFor(() => receiver.received.length >= total, 120_000);
    await new Promise((r) => setTimeout(r, 500));

    for (const hook of hooks) {
      const mine = receiver.received.filter((r) => (JSON.parse(r.body) as Body).webhookId === hook.id);
      const got = new Set(
        mine.map((r) => {
          const body = JSON.parse(r.body) as Body;
          return `${body.type}:${body.data.userOp?.userOpHash ?? body.data.userOpHash}`;
        }),
      );
      expect([...got].sort(), `${hook.filter} ${hook.x}`).to.deep.equal([...hook.expected].sort());
      expect(mine, `${hook.filter}: one request per event`).to.have.length(hook.expected.size);
      for (const r of mine) verifySignature(hook.secret, r);
    }
    expect(receiver.received).to.have.length(total);
    // Every payload the real indexer wrote fits the contract the dispatcher reads it with.
    expect(await outboxDeadLetters.listByChain(h.db, 31337)).to.deep.equal([]);
  });

  it('tells a webhook when ops it was sent leave the chain in a reorg, then sends them again from their new blocks', async () => {
    // The bundler of the newest op: the reorg below replaces its block.
    const newest = [...devnet.truth.userOps].sort((a, b) => b.blockNumber - a.blockNumber)[0]!;
    const bundler = newest.bundler;
    const hook = await h.createWebhook(receiver.url, 'BUNDLER', bundler);
    const config = loadConfig(allInOneEnvSchema, {
      NETWORKS: 'devnet',
      RPC_URL_DEVNET: devnet.rpcUrl,
      START_BLOCK_DEVNET: '0',
      LOG_LEVEL: 'silent',
    });
    await h.startDispatcher();
    indexer = startIndexer({ db: h.db, config, log: createLogger({ level: 'silent', name: 'indexer' }) });
    await indexer.syncNow();
    const before = devnet.truth.userOps.filter((o) => o.bundler === bundler);
    await receiver.waitFor(() => receiver.received.length >= before.length, 60_000);

    const change = await reorg(devnet, 4);
    const gone = new Set(before.filter((o) => o.blockNumber > change.commonAncestor.number).map((o) => o.userOpHash));
    expect(gone.size, 'the reorg removes ops this webhook was sent').to.be.greaterThan(0);
    await indexer.syncNow();
    const after = devnet.truth.userOps.filter((o) => o.bundler === bundler);
    const again = after.filter((o) => o.blockNumber > change.commonAncestor.number);
    await receiver.waitFor(() => receiver.received.length >= before.length + 1 + again.length, 60_000);
    await new Promise((r) => setTimeout(r, 500));

    for (const r of receiver.received) verifySignature(hook.secret, r);
    const bodies = receiver.received.map(
      (r) => JSON.parse(r.body) as Body & { data: { userOpHashes?: string[]; commonAncestor?: number } },
    );
    const notices = bodies.filter((b) => b.type === 'reorg');
    expect(notices).to.have.length(1);
    expect(new Set(notices[0]!.data.userOpHashes)).to.deep.equal(gone);
    expect(notices[0]!.data.commonAncestor).to.equal(change.commonAncestor.number);
    const sent = bodies.filter((b) => b.type === 'user_operation').map((b) => b.data.userOp!.userOpHash);
    expect(new Set(sent)).to.deep.equal(new Set([...before, ...after].map((o) => o.userOpHash)));
    expect(sent).to.have.length(before.length + again.length);
    expect(await outboxDeadLetters.listByChain(h.db, 31337)).to.deep.equal([]);
  });
});
