/**
 * How the call-rate limiter tells a plan's limit (most requests refused) from a provider's bad
 * minute (a refusal now and then, whatever the pace).
 */
import { expect } from 'chai';
import { CallRateLimiter } from '../../../indexer/sync/callRateLimiter.js';

describe('sync/CallRateLimiter', () => {
  it('keeps its pace through a refusal now and then (a bad minute, not a limit)', async () => {
    const pace = new CallRateLimiter();
    for (let i = 0; i < 40; i++) {
      await pace.take(25);
      if (i % 10 === 9) expect(pace.refused()).to.equal(null);
      else pace.answered(25);
    }
    expect(pace.callsPerSecond).to.equal(Infinity);
  });

  it('slows to 70 % of the pace sent when most requests are refused (a plan’s limit), once a second', async () => {
    const pace = new CallRateLimiter();
    for (let i = 0; i < 4; i++) await pace.take(25);
    const cuts = [pace.refused(), pace.refused(), pace.refused(), pace.refused()];
    expect(cuts.filter((c) => c !== null)).to.deep.equal([70]);
    expect(pace.batchCap).to.equal(70);
  });
});
