import { expect } from 'chai';
import { bytea } from '../../shared/db/client.js';
import { userOpSchema } from '../../shared/models/userOp.js';
import { DEVNET, insertOp, insertOutbox, makeOp, randomAddress, setIndexedBlock, type FakeOp } from './support/chainRows.js';
import { useWebhookHarness } from './support/harness.js';
import { useReceiver, verifySignature } from './support/receiver.js';

type Body = {
  type: string;
  id: string;
  webhookId: string;
  chainId: number;
  network: string;
  timestamp: string;
  data: Record<string, unknown>;
};
const parse = (body: string) => JSON.parse(body) as Body;
const eventOf = (b: Body) => `${b.type}:${(b.data.userOp as { userOpHash?: string } | undefined)?.userOpHash ?? String(b.data.userOpHash)}`;

describe('webhook dispatcher: matching, payload, signature', function () {
  this.timeout(60_000);
  const h = useWebhookHarness();
  const receiver = useReceiver();

  it('delivers exactly the matching events for each filter kind, each signed and in the spec shape', async () => {
    const [A, P, B, F] = [randomAddress(), randomAddress(), randomAddress(), randomAddress()];
    const hooks = {
      ADDRESS: await h.createWebhook(receiver.current.url, 'ADDRESS', A),
      PAYMASTER: await h.createWebhook(receiver.current.url, 'PAYMASTER', P),
      BUNDLER: await h.createWebhook(receiver.current.url, 'BUNDLER', B),
      FACTORY: await h.createWebhook(receiver.current.url, 'FACTORY', F),
    };
    // Pools mixing watched and unwatched addresses, so every op may hit zero, one or several filters.
    const pick = <T>(xs: T[], i: number, salt: number) => xs[(i * 7 + salt * 13) % xs.length]!;
    const others = Array.from({ length: 3 }, randomAddress);
    const deployed: string[] = [];
    const ops: Array<{ op: FakeOp; factoryOfSender: string | null }> = [];
    for (let i = 0; i < 60; i++) {
      const deploys = i % 9 === 0;
      const reuse = !deploys && i % 4 === 0 && deployed.length > 0;
      const sender = reuse ? deployed[i % deployed.length]! : pick([A, ...others, randomAddress()], i, 1);
      const op = makeOp({
        sender: deploys ? randomAddress() : sender,
        paymaster: pick([P, null, others[0]!], i, 2),
        bundler: pick([B, ...others], i, 3),
        deployedBy: deploys ? pick([F, others[1]!], i, 4) : null,
        targets: i % 3 === 0 ? [pick([A, others[2]!], i, 5), A] : [],
        transferParties: i % 5 === 0 ? [A, others[0]!] : [],
        blockNumber: 1 + Math.floor(i / 4),
        logIndex: i,
      });
      if (op.deployedBy === F) deployed.push(op.sender);
      // Later ops of a deployed account carry no factory in the outbox: the dispatcher finds it in accounts.
      ops.push({ op, factoryOfSender: null });
    }
    for (const { op, factoryOfSender } of ops) await insertOp(h.db, op, { factoryOfSender });
    await setIndexedBlock(h.db, 100);

    // The independent expectation, straight from the filter definitions.
    const factoryOf = new Map(ops.filter(({ op }) => op.deployedBy).map(({ op }) => [op.sender, op.deployedBy!]));
    const expected: Record<keyof typeof hooks, Set<string>> = {
      ADDRESS: new Set(),
      PAYMASTER: new Set(),
      BUNDLER: new Set(),
      FACTORY: new Set(),
    };
    for (const { op } of ops) {
      const uo = `user_operation:${op.userOpHash}`;
      if ([op.sender, ...op.targets, ...op.transferParties].includes(A)) expected.ADDRESS.add(uo);
      if (op.paymaster === P) expected.PAYMASTER.add(uo);
      if (op.bundler === B) expected.BUNDLER.add(uo);
      if (factoryOf.get(op.sender) === F) expected.FACTORY.add(uo);
      if (op.deployedBy === F) expected.FACTORY.add(`account_deployed:${op.userOpHash}`);
      if (op.deployedBy && op.sender === A) expected.ADDRESS.add(`account_deployed:${op.userOpHash}`);
    }
    const total = Object.values(expected).reduce((n, s) => n + s.size, 0);
    for (const set of Object.values(expected)) expect(set.size).to.be.greaterThan(0);

    await h.startDispatcher();
    // At least once per webhook-id: on a loaded machine an answer can come after the timeout, and the
    // delivery is sent again under its id. Each id counts once; an event under two ids counts twice.
    await receiver.current.waitFor(() => receiver.current.delivered().size >= total);
    await new Promise((r) => setTimeout(r, 300)); // nothing more may arrive
    expect(receiver.current.delivered().size).to.equal(total);

    for (const [filter, hook] of Object.entries(hooks) as Array<[keyof typeof hooks, { id: string; secret: string }]>) {
      const mine = [...receiver.current.delivered().values()].filter((r) => parse(r.body).webhookId === hook.id);
      expect(new Set(mine.map((r) => eventOf(parse(r.body)))), filter).to.deep.equal(expected[filter]);
      for (const r of mine) {
        verifySignature(hook.secret, r);
        expect(() => verifySignature(hooks[filter === 'ADDRESS' ? 'BUNDLER' : 'ADDRESS'].secret, r)).to.throw();
        const body = parse(r.body);
        expect(body.id).to.equal(r.headers['webhook-id']);
        expect(body.id).to.match(/^msg_[0-9A-Z]{26}$/);
        expect(body).to.include({ chainId: DEVNET, network: 'devnet' });
        expect(Date.parse(body.timestamp)).to.be.greaterThan(0);
        expect(body.data.block).to.have.keys(['number', 'hash', 'timestamp']);
        expect(body.data.transaction).to.have.key('hash');
        expect(body.data.logIndex).to.be.a('number');
        expect(body.data.bundleIndex).to.be.a('number');
        if (body.type === 'user_operation') userOpSchema.parse(body.data.userOp);
      }
    }
  });

  it('waits for finality: an event is sent once its block is finalityDepth below the indexed block', async () => {
    const hook = await h.createWebhook(receiver.current.url, 'BUNDLER', '0x00000000000000000000000000000000000000b1');
    await h.startDispatcher({}, { FINALITY_DEPTH_DEVNET: '3' });
    await insertOp(h.db, makeOp({ bundler: '0x00000000000000000000000000000000000000b1', blockNumber: 10 }));
    await insertOp(h.db, makeOp({ bundler: '0x00000000000000000000000000000000000000b1', blockNumber: 12 }));
    await setIndexedBlock(h.db, 12);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.current.received).to.have.length(0);
    await setIndexedBlock(h.db, 13);
    await receiver.current.waitFor(() => receiver.current.received.length === 1);
    await setIndexedBlock(h.db, 15);
    await receiver.current.waitFor(() => receiver.current.received.length === 2);
    expect(parse(receiver.current.received[1]!.body).webhookId).to.equal(hook.id);
  });

  it('sends a reorg notice for delivered ops that left the chain, and skips events of replaced blocks', async () => {
    const sender = randomAddress();
    const hook = await h.createWebhook(receiver.current.url, 'ADDRESS', sender);
    await h.startDispatcher();
    const kept = makeOp({ sender, blockNumber: 5 });
    const removed = makeOp({ sender, blockNumber: 6 });
    await insertOp(h.db, kept);
    await insertOp(h.db, removed);
    await setIndexedBlock(h.db, 6);
    await receiver.current.waitFor(() => receiver.current.received.length === 2);

    // The indexer rolls block 6 back and writes it again with another hash: the op moved to block 7.
    await h.db.query(`delete from user_ops where user_op_hash = $1`, [bytea(removed.userOpHash)]);
    await h.db.query(`delete from bundles where tx_hash = $1`, [bytea(removed.transactionHash)]);
    await h.db.query(`delete from bundle_transactions where tx_hash = $1`, [bytea(removed.transactionHash)]);
    await insertOutbox(h.db, {
      type: 'reorg',
      blockNumber: 5,
      userOpHash: null,
      payload: { commonAncestor: 5, removedFromBlock: 6, removedUserOpHashes: [removed.userOpHash], removedAccounts: [] },
    });
    const again = { ...removed, blockNumber: 7, blockHash: `0x${'77'.repeat(32)}` };
    await insertOp(h.db, again);
    await setIndexedBlock(h.db, 7);
    await receiver.current.waitFor(() => receiver.current.received.length === 4);
    const [reorg, moved] = receiver.current.received.slice(2).map((r) => parse(r.body));
    expect(reorg!.type).to.equal('reorg');
    expect(reorg!.data).to.deep.equal({
      commonAncestor: 5,
      removedFromBlock: 6,
      userOpHashes: [removed.userOpHash],
      beyondFinality: false,
    });
    expect(moved!.type).to.equal('user_operation');
    expect((moved!.data.block as { number: number }).number).to.equal(7);
    expect(reorg!.webhookId).to.equal(hook.id);

    // An outbox event whose op now sits in another block describes data that is gone: never sent.
    const stale = makeOp({ sender, blockNumber: 8 });
    await insertOp(h.db, stale);
    await h.db.query(`update bundle_transactions set block_hash = $2 where tx_hash = $1`, [
      bytea(stale.transactionHash),
      bytea(`0x${'88'.repeat(32)}`),
    ]);
    await setIndexedBlock(h.db, 8);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.current.received).to.have.length(4);
  });

  it('does not send events recorded before the webhook existed', async () => {
    const sender = randomAddress();
    await insertOp(h.db, makeOp({ sender, blockNumber: 1 }));
    await setIndexedBlock(h.db, 1);
    await new Promise((r) => setTimeout(r, 20));
    await h.createWebhook(receiver.current.url, 'ADDRESS', sender);
    await insertOp(h.db, makeOp({ sender, blockNumber: 2 }));
    await setIndexedBlock(h.db, 2);
    await h.startDispatcher();
    await receiver.current.waitFor(() => receiver.current.received.length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.current.received).to.have.length(1);
    expect((parse(receiver.current.received[0]!.body).data.block as { number: number }).number).to.equal(2);
  });
});
