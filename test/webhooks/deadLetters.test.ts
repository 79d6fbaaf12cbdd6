/**
 * An outbox row the dispatcher cannot process is dead-lettered with its reason, and the events
 * around it are delivered: it does not roll back its chain's fan-out and hold every later event of
 * that chain back.
 */
import { expect } from 'chai';
import { bytea } from '../../shared/db/client.js';
import * as outboxDeadLetters from '../../shared/db/tables/outboxDeadLetters.js';
import { DEVNET, insertOp, insertOutbox, makeOp, randomAddress, randomHash, setIndexedBlock } from './support/chainRows.js';
import { useWebhookHarness } from './support/harness.js';
import { useReceiver, verifySignature, type Receiver } from './support/receiver.js';

type Body = { type: string; data: { userOp?: { userOpHash: string }; userOpHash?: string } };
const eventsOf = (receiver: Receiver) =>
  [...receiver.delivered().values()].map((r) => {
    const body = JSON.parse(r.body) as Body;
    return `${body.type}:${body.data.userOp?.userOpHash ?? body.data.userOpHash}`;
  });

describe('webhook dispatcher: outbox events it cannot process are dead-lettered', function () {
  this.timeout(60_000);
  const h = useWebhookHarness();
  const receiver = useReceiver();

  it('delivers the good events around malformed rows, dead-letters those with the reason, and keeps up afterwards', async () => {
    const sender = randomAddress();
    const hook = await h.createWebhook(receiver.current.url, 'ADDRESS', sender);
    const good = [makeOp({ sender, blockNumber: 1, logIndex: 0 }), makeOp({ sender, blockNumber: 2, logIndex: 0 })];
    const deployer = makeOp({ sender, blockNumber: 3, logIndex: 0, deployedBy: randomAddress() });

    await insertOp(h.db, good[0]!);
    // A user_operation whose sender is missing and whose block hash is not a hash.
    await insertOutbox(h.db, {
      type: 'user_operation',
      blockNumber: 1,
      userOpHash: randomHash(),
      payload: {
        userOpHash: randomHash(),
        paymaster: null,
        bundler: randomAddress(),
        blockNumber: 1,
        blockHash: 'garbage',
        transactionHash: randomHash(),
        bundleIndex: 0,
        logIndex: 1,
      },
    });
    // A type this dispatcher does not know.
    await insertOutbox(h.db, { type: 'user_operation_v2', blockNumber: 1, userOpHash: null, payload: { anything: true } });
    await insertOp(h.db, good[1]!);
    // A payload that is not an object at all.
    await h.db.query(
      `insert into outbox_events (chain_id, type, block_number, user_op_hash, payload) values ($1, 'reorg', 2, null, '"oops"')`,
      [DEVNET],
    );
    // Well-formed, but its op's stored block time cannot be turned into the body's timestamp.
    await insertOp(h.db, deployer);
    await h.db.query(`update user_ops set block_time = 99999999999999 where user_op_hash = $1`, [bytea(deployer.userOpHash)]);
    await setIndexedBlock(h.db, 3);

    const dispatcher = await h.startDispatcher();
    const expected = good.map((o) => `user_operation:${o.userOpHash}`);
    await receiver.current.waitFor(() => receiver.current.delivered().size >= expected.length);
    await h.waitForDeliveries('delivered', expected.length);

    const letters = await waitForDeadLetters(5);
    const { rows: ids } = await h.db.query<{ id: string; type: string }>(`select id, type from outbox_events order by id`);
    const badIds = [ids[1]!, ids[2]!, ids[4]!, ids[5]!, ids[6]!].map((r) => Number(r.id));
    // The deployer op has two events (user_operation, account_deployed); both fail to build.
    expect(letters.map((l) => l.outboxEventId)).to.deep.equal([badIds[0], badIds[1], badIds[2], badIds[3], badIds[4]]);
    expect(letters[0]!.reason).to.match(/^user_operation payload: .*sender: .*blockHash: not a 32-byte hex hash/);
    expect(letters[0]!.payload).to.include({ blockHash: 'garbage' });
    expect(letters[1]!).to.include({ type: 'user_operation_v2', reason: 'unknown event type "user_operation_v2"' });
    expect(letters[1]!.payload).to.deep.equal({ anything: true });
    expect(letters[2]!).to.include({ type: 'reorg', payload: 'oops' });
    expect(letters[2]!.reason).to.match(/^reorg payload: \(payload\): /);
    for (const l of letters.slice(3)) expect(l.reason).to.match(/^building the delivery body failed: Invalid time value/);
    expect(letters.every((l) => l.chainId === DEVNET && l.createdAt instanceof Date)).to.equal(true);
    expect(dispatcher.stats().deadLettered).to.equal(5);

    // The cursor is past every row: later events flow.
    const later = [makeOp({ sender, blockNumber: 4 }), makeOp({ sender, blockNumber: 5 })];
    for (const op of later) await insertOp(h.db, op);
    await setIndexedBlock(h.db, 5);
    await receiver.current.waitFor(() => receiver.current.delivered().size >= 4);
    expect(eventsOf(receiver.current).sort()).to.deep.equal([...expected, ...later.map((o) => `user_operation:${o.userOpHash}`)].sort());
    for (const r of receiver.current.received) verifySignature(hook.secret, r);
    expect(dispatcher.stats()).to.include({ deadLettered: 5, eventsMatched: 9 });
    expect(await outboxDeadLetters.listByChain(h.db, DEVNET)).to.have.length(5);
  });

  async function waitForDeadLetters(count: number) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const letters = await outboxDeadLetters.listByChain(h.db, DEVNET);
      if (letters.length >= count) return letters;
      if (Date.now() > deadline) throw new Error(`${letters.length} dead letters after 20 s, expected ${count}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
});
