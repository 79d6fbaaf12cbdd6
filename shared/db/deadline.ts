/**
 * The deadline of the database work under way. The web gives each request one (server/context.ts):
 * every wait of that request's database work (for a connection or a free one of the pool, for a
 * statement's answer, for a read another request started and it shares) ends by then, so a request
 * the database cannot answer fails within one budget however many waits it makes in turn, rather
 * than within the sum of their limits. The deadline follows the work through its awaits
 * (AsyncLocalStorage), so the pool is the same object for every request and per-database caches
 * keyed by it still work. Work outside a deadline (the workers, the web's timers) has its
 * statements' own limits only.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { DatabaseDeadlineError } from './errorClassification.js';

const deadlines = new AsyncLocalStorage<number>();

/** Runs `fn` with its database work due by `deadline` (epoch ms), or by an enclosing deadline if that is sooner. */
export function withDeadline<T>(deadline: number, fn: () => T): T {
  return deadlines.run(Math.min(deadline, deadlines.getStore() ?? Infinity), fn);
}

/** Milliseconds left before the deadline of the work under way (Infinity outside one; 0 or less once passed). */
export function remainingMs(): number {
  const deadline = deadlines.getStore();
  return deadline === undefined ? Infinity : deadline - Date.now();
}

/** What a wait cut by its deadline settles with first. */
const PASSED = Symbol('deadline passed');

/**
 * `work`, waited for no longer than the deadline of the work under way: past it, DatabaseDeadlineError.
 * For waits that cannot be cut short themselves: a connection from the pool (`abandoned` then releases
 * the one that comes too late), or a read another request started and this one shares.
 */
export async function withinDeadline<T>(work: Promise<T>, abandoned?: (late: T) => void): Promise<T> {
  const left = remainingMs();
  if (left === Infinity) return work;
  let timer: NodeJS.Timeout | undefined;
  const passed = new Promise<typeof PASSED>((resolve) => (timer = setTimeout(resolve, Math.max(0, left), PASSED)));
  try {
    const first = await Promise.race([work, passed]);
    if (first !== PASSED) return first;
  } finally {
    clearTimeout(timer);
  }
  void work.then(abandoned, () => undefined);
  throw new DatabaseDeadlineError();
}
