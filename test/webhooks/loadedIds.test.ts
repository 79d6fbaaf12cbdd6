/**
 * The dispatcher loaded the way a busy machine loads it: three dispatchers (two in processes of
 * their own whose event loops stall, as when other work takes the cores), a receiver that answers
 * some requests after the dispatcher's timeout and fails others, leases shorter than a stall, ops
 * arriving while earlier ones are sent and reorgs moving ops that were just sent. Counted at the
 * receiver: each event (a webhook, an op, the block it is in) arrives under exactly one webhook-id,
 * at least once; an op that arrived and then left its block is named by a reorg notice.
 */
import { expect } from 'chai';
import type { ChildProcess } from 'node:child_process';
import { bytea, type Db } from '../../shared/db/client.js';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import * as cursors from '../../shared/db/tables/webhookOutboxCursors.js';
import { createLogger } from '../../shared/log.js';
import { fanOutChain } from '../../webhooks/fanOut.js';
import { DEVNET, insertOp, insertOutbox, makeOp, randomAddress, randomHash, setIndexedBlock, type FakeOp } from './support/chainRows.js';
import { useWebhookHarness } from './support/harness.js';
import { startReceiver, verifySignature, type Receiver } from './support/receiver.js';
import { spawnDispatcher } from './support/spawnDispatcher.js';

const ROUNDS = 8;
const BLOCKS_A_ROUND = 10;

type Body = { type: string; id: string; webhookId: string; data: Record<string, unknown> };

/** Short enough that stalls and late answers overlap them: leases run out while a request is out. */
const OPTIONS = {
  pollIntervalMs: 20,
  leaseMs: 300,
  timeoutMs: 150,
  concurrency: 12,
  perWebhook: 6,
  retrySchedule: Array.from({ length: 30 }, (_, i) => (i === 0 ? 0 : 20)),
};

/** What the indexer's rollback leaves for the dispatcher: the ops' rows gone, a reorg event naming them. */
async function rollBack(db: Db, ops: FakeOp[], commonAncestor: number): Promise<void> {
  for (const op of ops) {
    await db.query(`delete from user_ops where user_op_hash = $1`, [bytea(op.userOpHash)]);
    await db.query(`delete from bundles where tx_hash = $1`, [bytea(op.transactionHash)]);
    await db.query(`delete from bundle_transactions where tx_hash = $1`, [bytea(op.transactionHash)]);
  }
  await insertOutbox(db, {
    type: 'reorg',
    blockNumber: commonAncestor,
    userOpHash: null,
    payload: {
      commonAncestor,
      removedFromBlock: commonAncestor + 1,
      removedUserOpHashes: ops.map((o) => o.userOpHash),
      removedAccounts: [],
    },
  });
}

describe('webhook dispatcher: one webhook-id per event under load', function () {
  this.timeout(180_000);
  const h = useWebhookHarness();
  const children: ChildProcess[] = [];
  let receiver: Receiver | undefined;
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
    }
    await receiver?.close();
  });

  it('sends each event under one webhook-id, at least once, and retracts what left the chain', async function () {
    // Dispatchers in other processes need PostgreSQL.
    if (!h.url) this.skip();
    receiver = await startReceiver(() => {
      const r = Math.random();
      if (r < 0.2) return { delayMs: 200 + Math.random() * 250 }; // answered after the dispatcher gave up
      if (r < 0.3) return { status: 500 };
      return { delayMs: Math.random() * 20 };
    });
    const [a, b, paymaster] = [randomAddress(), randomAddress(), randomAddress()];
    const hooks = [
      await h.createWebhook(`${receiver.url}/a`, 'ADDRESS', a),
      await h.createWebhook(`${receiver.url}/b`, 'ADDRESS', b),
      await h.createWebhook(`${receiver.url}/p`, 'PAYMASTER', paymaster),
    ];
    const secretOf = new Map(hooks.map((w) => [w.id, w.secret]));
    children.push(await spawnDispatcher(h.url, OPTIONS, { STALL_EVERY_MS: '150', STALL_FOR_MS: '120' }));
    children.push(await spawnDispatcher(h.url, OPTIONS, { STALL_EVERY_MS: '230', STALL_FOR_MS: '200' }));
    await h.startDispatcher(OPTIONS);

    // The chain as the indexer writes it: two ops a block; every ten blocks the last three blocks are
    // replaced and their ops land again in the next block (new block hash).
    const onChain = new Map<string, FakeOp>();
    const moved = new Set<string>();
    let block = 0;
    let sent = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < BLOCKS_A_ROUND; i++) {
        block++;
        const blockHash = randomHash();
        for (const [n, sender] of [a, b].entries()) {
          const op = makeOp({ sender, paymaster, blockNumber: block, blockHash, logIndex: n });
          await insertOp(h.db, op);
          onChain.set(op.userOpHash, op);
        }
        await setIndexedBlock(h.db, block);
      }
      const replaced = [...onChain.values()].filter((o) => o.blockNumber > block - 3);
      await rollBack(h.db, replaced, block - 3);
      block++;
      const blockHash = randomHash();
      for (const [n, op] of replaced.entries()) {
        const again = { ...op, blockNumber: block, blockHash, transactionHash: randomHash(), logIndex: n };
        await insertOp(h.db, again);
        onChain.set(op.userOpHash, again);
        moved.add(op.userOpHash);
      }
      await setIndexedBlock(h.db, block);
      // Let the dispatchers catch up a little between rounds, as blocks arrive over time.
      await new Promise((r) => setTimeout(r, 100));
      sent = onChain.size;
    }

    // Every op where it ended, to both its webhooks (its sender's and the paymaster's), answered 2xx.
    const eventKey = (webhookId: string, userOpHash: string, blockHash: string) => `${webhookId} ${userOpHash} ${blockHash}`;
    const hookOf = (sender: string) => hooks[sender === a ? 0 : 1]!.id;
    const final = [...onChain.values()].flatMap((op) => [
      eventKey(hookOf(op.sender), op.userOpHash, op.blockHash),
      eventKey(hooks[2]!.id, op.userOpHash, op.blockHash),
    ]);
    const deliveredEvents = () => {
      const got = new Set<string>();
      for (const r of receiver!.delivered().values()) {
        const body = JSON.parse(r.body) as Body;
        if (body.type !== 'user_operation') continue;
        const data = body.data as { userOp: { userOpHash: string }; block: { hash: string } };
        got.add(eventKey(body.webhookId, data.userOp.userOpHash, data.block.hash));
      }
      return got;
    };
    await receiver.waitFor(() => {
      const got = deliveredEvents();
      return final.every((k) => got.has(k));
    }, 120_000);
    // Late sends (a lease that ran out, a reorg notice) have time to arrive.
    await new Promise((r) => setTimeout(r, 1500));

    const idsOf = new Map<string, Set<string>>();
    const bodyOf = new Map<string, string>();
    const retracted = new Map<string, Set<string>>();
    for (const r of receiver.received) {
      const id = String(r.headers['webhook-id']);
      const body = JSON.parse(r.body) as Body;
      verifySignature(secretOf.get(body.webhookId)!, r);
      expect(body.id, 'body id equals webhook-id').to.equal(id);
      if (bodyOf.has(id)) expect(r.body, `bytes of every attempt of ${id}`).to.equal(bodyOf.get(id));
      bodyOf.set(id, r.body);
      if (body.type === 'reorg') {
        const set = retracted.get(body.webhookId) ?? new Set<string>();
        for (const hash of (body.data as { userOpHashes: string[] }).userOpHashes) set.add(hash);
        retracted.set(body.webhookId, set);
        continue;
      }
      const data = body.data as { userOp: { userOpHash: string }; block: { hash: string } };
      const key = eventKey(body.webhookId, data.userOp.userOpHash, data.block.hash);
      idsOf.set(key, (idsOf.get(key) ?? new Set()).add(id));
    }
    const twice = [...idsOf].filter(([, ids]) => ids.size > 1).map(([key, ids]) => `${key}: ${[...ids].join(', ')}`);
    expect(twice, 'events sent under more than one webhook-id').to.deep.equal([]);

    // An op a webhook heard of in a block it then left is named by a reorg notice to that webhook.
    const unretracted = [...idsOf.keys()]
      .map((key) => key.split(' ') as [string, string, string])
      .filter(([, hash, blockHash]) => onChain.get(hash)!.blockHash !== blockHash)
      .filter(([webhookId, hash]) => !retracted.get(webhookId)?.has(hash))
      .map((key) => key.join(' '));
    expect(unretracted, 'ops sent, moved by a reorg, and never retracted').to.deep.equal([]);

    expect(moved.size).to.be.greaterThan(0);
    expect(sent).to.equal(ROUNDS * BLOCKS_A_ROUND * 2);
    const late = receiver.received.filter((r) => r.at - r.startedAt >= OPTIONS.timeoutMs).length;
    expect(late, 'answers the dispatcher had stopped waiting for').to.be.greaterThan(0);
  });
  it('owes a reorg notice for an op whose delivery a dispatcher claimed while the reorg retracted it', async function () {
    // Two connections at once: PostgreSQL.
    if (!h.url) this.skip();
    const sender = randomAddress();
    const hook = await h.createWebhook('http://127.0.0.1:9/hook', 'ADDRESS', sender);
    const op = makeOp({ sender, blockNumber: 1 });
    await insertOp(h.db, op);
    await setIndexedBlock(h.db, 1);
    await cursors.ensure(h.db, DEVNET);
    const chain = { chainId: DEVNET, network: 'devnet', finalityDepth: 0 };
    expect((await fanOutChain({ db: h.db, log: createLogger({ level: 'silent', name: 'test' }) }, chain, 10)).deliveries).to.equal(1);

    // A dispatcher claims the delivery (it is about to be sent) and commits while the reorg's
    // retraction runs: the retraction starts before the claim commits and waits for its row lock.
    let claimed!: () => void;
    const claimHeld = new Promise<void>((resolve) => (claimed = resolve));
    const claim = h.db.transaction(async (tx) => {
      const rows = await webhookDeliveries.claimDue(tx, { limit: 10, leaseMs: 60_000, perWebhook: 10, skipWebhooks: [] });
      expect(rows).to.have.length(1);
      claimed();
      await new Promise((r) => setTimeout(r, 500));
    });
    await claimHeld;
    const retracted = await h.db.transaction((tx) => webhookDeliveries.retractOps(tx, DEVNET, [op.userOpHash]));
    await claim;
    expect(retracted, 'webhooks owed a reorg notice').to.deep.equal([{ webhookId: hook.id, userOpHashes: [op.userOpHash] }]);
  });
});
