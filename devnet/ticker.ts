import { setTimeout as sleep } from 'node:timers/promises';
/**
 * Live demo traffic's clock: runs `tick` every `intervalMs` after the last one ended, until stopped.
 * A tick's failure goes to `onError`, except once stopping has begun: a Ctrl-C in a terminal stops
 * the chain and the bundlers at the same moment as opscan, so a tick cut short then is no failure.
 */
export type Ticker = { stop(): Promise<void> };

const TICK_STOP_WAIT_MS = 2_000;

export function startTicker(tick: () => Promise<unknown>, opts: { intervalMs: number; onError: (err: unknown) => void }): Ticker {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<unknown> = Promise.resolve();
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(() => {
      current = tick()
        .catch((err: unknown) => {
          if (!stopped) opts.onError(err);
        })
        .finally(schedule);
    }, opts.intervalMs);
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // A tick may be waiting on the bundlers for receipts: it is given a moment to end, then left
      // to the chain and bundlers' stop (which comes next and cuts it short), so that Ctrl-C never waits on it.
      await Promise.race([current, sleep(TICK_STOP_WAIT_MS)]);
    },
  };
}
