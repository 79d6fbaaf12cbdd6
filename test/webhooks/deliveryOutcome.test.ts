/**
 * testWebhook and replayWebhookDelivery answer the outcome of the attempt they wait for. The
 * dispatcher logs an attempt and settles its delivery in one transaction; the waiter must never
 * answer a new attempt beside the delivery's status from before it (a CI run saw a replay answer
 * 'pending' with its second attempt logged).
 */
import { expect } from 'chai';
import type { Queryable } from '../../shared/db/client.js';
import * as webhookAttempts from '../../shared/db/tables/webhookAttempts.js';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import { waitForAttempt } from '../../server/endpoints/deliveryOutcome.js';
import { insertOp, makeOp, randomAddress, setIndexedBlock } from './support/chainRows.js';
import { useWebhookHarness } from './support/harness.js';
import { useReceiver } from './support/receiver.js';

describe('waiting for a delivery attempt', function () {
  this.timeout(30_000);
  const h = useWebhookHarness();
  const receiver = useReceiver();

  it('answers the status the attempt settled, when the attempt commits between the waiter’s reads', async () => {
    const sender = randomAddress();
    await h.createWebhook(receiver.current.url, 'ADDRESS', sender);
    await insertOp(h.db, makeOp({ sender, blockNumber: 1 }));
    await setIndexedBlock(h.db, 1);
    const dispatcher = await h.startDispatcher();
    await h.waitForDeliveries('delivered', 1);
    await dispatcher.stop();

    // A replay claimed by a dispatcher whose success is not yet recorded.
    const { rows } = await h.db.query<{ id: string }>(`select id from webhook_deliveries`);
    const id = rows[0]!.id;
    await webhookDeliveries.requeue(h.db, id);
    const [claimed] = await webhookDeliveries.claimDue(h.db, { limit: 1, leaseMs: 60_000, perWebhook: 1, skipWebhooks: [] });
    expect(claimed?.attempt).to.equal(2);

    // The dispatcher's success write commits right after the waiter's first read.
    let reads = 0;
    const commitsAfterFirstRead: Queryable = {
      ...h.db,
      query: async (text, values) => {
        const result = await h.db.query(text, values);
        if (++reads === 1) {
          await h.db.transaction(async (tx) => {
            await webhookAttempts.insertMany(tx, [
              { deliveryId: id, attempt: 2, startedAt: new Date(), durationMs: 1, responseStatus: 200, error: null, responseSnippet: '' },
            ]);
            await webhookDeliveries.settleDeliveredMany(tx, [{ id, attempt: 2 }]);
          });
        }
        return result as never;
      },
    };
    const delivery = await waitForAttempt(commitsAfterFirstRead, id, 1);
    expect(delivery).to.include({ id, status: 'delivered', attempts: 2 });
  });
});
