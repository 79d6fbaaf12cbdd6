/**
 * Live demo traffic's clock: runs `tick` every `intervalMs` after the last one ended, until stopped.
 * A tick's failure goes to `onError`, except once stopping has begun: a Ctrl-C in a terminal stops
 * the chain and the bundlers at the same moment as opscan, so a tick cut short then is no failure.
 */
export type Ticker = { stop(): Promise<void> };

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
      await current;
    },
  };
}
