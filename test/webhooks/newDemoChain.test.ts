/**
 * The demo chain of `npm start` is new on every start, so a second start rolls the stored rows
 * back to before block 0 (bin/start.ts, with the indexer's own rollbackTo). That reorg event
 * (commonAncestor -1) is a valid outbox event: no dead letter, no error logged, and webhooks that
 * had received the removed ops get a reorg notice for them.
 */
import { expect } from 'chai';
import { pino } from 'pino';
import { Writable } from 'node:stream';
import { rollbackTo } from '../../indexer/index.js';
import * as outboxDeadLetters from '../../shared/db/tables/outboxDeadLetters.js';
import { startDispatcher } from '../../webhooks/startDispatcher.js';
import { DEVNET, insertOp, makeOp, randomAddress, setIndexedBlock } from './support/chainRows.js';
import { FAST_SCHEDULE, useWebhookHarness } from './support/harness.js';
import { useReceiver } from './support/receiver.js';

type Body = { type: string; data: { commonAncestor?: number; removedFromBlock?: number; userOpHashes?: string[] } };

/** A logger keeping every line it writes, to look for errors. */
function recordingLogger() {
  const lines: Array<{ level: number; msg: string }> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as { level: number; msg: string });
      done();
    },
  });
  return { log: pino({ level: 'debug' }, sink), lines };
}

describe('webhook dispatcher: npm start on a new demo chain (rows rolled back to before block 0)', function () {
  this.timeout(60_000);
  const h = useWebhookHarness();
  const receiver = useReceiver();

  it('delivers a reorg notice with commonAncestor -1, logs no error and dead-letters nothing', async () => {
    const sender = randomAddress();
    await h.createWebhook(receiver.current.url, 'ADDRESS', sender);
    const ops = [makeOp({ sender, blockNumber: 0 }), makeOp({ sender, blockNumber: 1 })];
    for (const op of ops) await insertOp(h.db, op);
    await setIndexedBlock(h.db, 1);

    const { log, lines } = recordingLogger();
    const dispatcher = await startDispatcher({
      db: h.db,
      config: h.config(),
      log,
      options: { pollIntervalMs: 50, retrySchedule: FAST_SCHEDULE, timeoutMs: 2000 },
    });
    try {
      await receiver.current.waitFor(() => receiver.current.received.length === 2);
      // What bin/start.ts does when it finds the previous run's chain.
      await rollbackTo(h.db, DEVNET, { number: -1, hash: '0x' });
      await setIndexedBlock(h.db, 0);
      // The reorg event ends either as a notice or as a dead letter.
      await receiver.current.waitFor(() => receiver.current.received.length === 3 || dispatcher.stats().deadLettered > 0);
      expect(await outboxDeadLetters.listByChain(h.db, DEVNET)).to.deep.equal([]);
      expect(lines.filter((l) => l.level >= 50).map((l) => l.msg)).to.deep.equal([]);

      const notice = JSON.parse(receiver.current.received[2]!.body) as Body;
      expect(notice.type).to.equal('reorg');
      expect(notice.data.commonAncestor).to.equal(-1);
      expect(notice.data.removedFromBlock).to.equal(0);
      expect(notice.data.userOpHashes).to.have.members(ops.map((o) => o.userOpHash));
    } finally {
      await dispatcher.stop();
    }
  });
});
