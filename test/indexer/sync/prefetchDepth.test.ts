/**
 * How many ranges a backfill keeps in flight: doubled while the writer waits for ranges (one more a
 * wait once the provider has refused a pace), halved when
 * the provider refuses calls for their pace, bounded by the raw logs the ranges in flight may hold.
 */
import { expect } from 'chai';
import { PrefetchDepth } from '../../../indexer/sync/prefetchDepth.js';

describe('PrefetchDepth', () => {
  it('doubles each time the writer waited, up to its maximum, and ignores waits of scheduling noise', () => {
    const depth = new PrefetchDepth({ min: 3, max: 20, logsInFlight: 1_000_000 });
    expect(depth.current).to.equal(3);
    depth.waited(1);
    expect(depth.current, 'a 1 ms wait').to.equal(3);
    depth.waited(40);
    expect(depth.current).to.equal(6);
    depth.waited(40);
    expect(depth.current).to.equal(12);
    for (let i = 0; i < 10; i++) depth.waited(200);
    expect(depth.current).to.equal(20);
  });

  it('halves on a rate refusal, never below its minimum, and grows one range a wait after one', () => {
    const depth = new PrefetchDepth({ min: 3, max: 32, logsInFlight: 1_000_000 });
    for (let i = 0; i < 3; i++) depth.waited(100);
    expect(depth.current).to.equal(24);
    depth.rateLimited();
    expect(depth.current).to.equal(12);
    depth.waited(100);
    expect(depth.current, 'after a refusal').to.equal(13);
    depth.rateLimited();
    depth.rateLimited();
    depth.rateLimited();
    expect(depth.current).to.equal(3);
    depth.waited(100);
    expect(depth.current).to.equal(4);
  });

  it('keeps the raw logs in flight within its budget once ranges are seen, but its minimum always', () => {
    const depth = new PrefetchDepth({ min: 2, max: 32, logsInFlight: 60_000 });
    for (let i = 0; i < 40; i++) depth.waited(100);
    expect(depth.current, 'before any range arrived').to.equal(32);
    depth.fetched(10_000);
    expect(depth.current).to.equal(6);
    depth.waited(100);
    expect(depth.current, 'grown from what the budget holds in flight').to.equal(6);
    for (let i = 0; i < 30; i++) depth.fetched(1_000);
    expect(depth.current, 'thin ranges again').to.equal(12);
    depth.waited(100);
    depth.waited(100);
    expect(depth.current, 'thin ranges, the writer waiting').to.equal(32);
    for (let i = 0; i < 30; i++) depth.fetched(100_000);
    expect(depth.current, 'ranges over the budget alone').to.equal(2);
  });
});
