import { expect } from 'chai';
import { decide, DISABLE_AFTER_FAILING_MS, MAX_RETRY_AFTER_MS, parseRetryAfter, RETRY_SCHEDULE_MS } from '../../webhooks/retryPolicy.js';

const now = new Date('2026-11-21T12:00:00Z');
const failure = (status: number | null = 500, retryAfterMs: number | null = null) => ({ ok: false as const, status, retryAfterMs });
const delayOf = (d: ReturnType<typeof decide>) => (d.kind === 'retry' ? d.at.getTime() - now.getTime() : NaN);

describe('retryPolicy', () => {
  it('follows the Standard Webhooks schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h', () => {
    const mid = () => 0.5; // no jitter
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((attempt) =>
      delayOf(decide({ result: failure(), attempt, now, failingSince: now, random: mid })),
    );
    const s = 1000;
    expect(delays).to.deep.equal([5 * s, 300 * s, 1800 * s, 7200 * s, 18000 * s, 36000 * s, 50400 * s, 72000 * s, 86400 * s]);
    expect(RETRY_SCHEDULE_MS).to.have.length(10);
  });

  it('gives up after the tenth attempt', () => {
    expect(decide({ result: failure(), attempt: 10, now, failingSince: now }).kind).to.equal('give_up');
  });

  it('jitters delays by ±20 %', () => {
    const low = delayOf(decide({ result: failure(), attempt: 2, now, failingSince: now, random: () => 0 }));
    const high = delayOf(decide({ result: failure(), attempt: 2, now, failingSince: now, random: () => 0.999999 }));
    expect(low).to.equal(240_000);
    expect(high).to.be.closeTo(360_000, 1);
  });

  it('honours Retry-After when it asks for longer, up to 24 h', () => {
    const mid = () => 0.5;
    expect(delayOf(decide({ result: failure(429, 60_000), attempt: 1, now, failingSince: now, random: mid }))).to.equal(60_000);
    expect(delayOf(decide({ result: failure(429, 1000), attempt: 1, now, failingSince: now, random: mid }))).to.equal(5000);
    expect(delayOf(decide({ result: failure(503, 10 * MAX_RETRY_AFTER_MS), attempt: 1, now, failingSince: now, random: mid }))).to.equal(
      MAX_RETRY_AFTER_MS,
    );
  });

  it('disables on 410 Gone, and after five days of failure', () => {
    expect(decide({ result: failure(410), attempt: 1, now, failingSince: null })).to.deep.equal({ kind: 'disable', reason: 'gone' });
    const longAgo = new Date(now.getTime() - DISABLE_AFTER_FAILING_MS);
    expect(decide({ result: failure(null), attempt: 1, now, failingSince: longAgo })).to.deep.equal({ kind: 'disable', reason: 'failing' });
    const recently = new Date(now.getTime() - DISABLE_AFTER_FAILING_MS + 1000);
    expect(decide({ result: failure(null), attempt: 1, now, failingSince: recently }).kind).to.equal('retry');
  });

  it('calls a 2xx delivered', () => {
    expect(decide({ result: { ok: true }, attempt: 3, now, failingSince: now })).to.deep.equal({ kind: 'delivered' });
  });

  it('takes injected schedules (tests run in milliseconds)', () => {
    expect(delayOf(decide({ result: failure(), attempt: 1, now, failingSince: now, schedule: [0, 20, 40], random: () => 0.5 }))).to.equal(
      20,
    );
    expect(decide({ result: failure(), attempt: 3, now, failingSince: now, schedule: [0, 20, 40] }).kind).to.equal('give_up');
  });

  it('parses Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('120', now)).to.equal(120_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 12:01:00 GMT', now)).to.equal(60_000);
    expect(parseRetryAfter('soon', now)).to.equal(null);
    expect(parseRetryAfter(null, now)).to.equal(null);
  });
});
