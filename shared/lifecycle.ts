import type { Logger } from './log.js';

export type Shutdown = {
  /** Registers a release callback; callbacks run last-registered first. */
  add(name: string, release: () => unknown): void;
  /** Runs every release callback once (also on SIGINT/SIGTERM), then resolves. */
  run(reason: string): Promise<void>;
};

/** Graceful shutdown: stop taking work, finish in-flight work, close resources, exit 0. */
export function createShutdown(log: Logger, options: { exitOnSignal?: boolean } = {}): Shutdown {
  const releases: Array<{ name: string; release: () => unknown }> = [];
  let running: Promise<void> | undefined;

  const shutdown: Shutdown = {
    add(name, release) {
      releases.push({ name, release });
    },
    run(reason) {
      running ??= (async () => {
        log.info({ reason }, 'shutting down');
        for (const { name, release } of releases.reverse()) {
          try {
            await release();
          } catch (err) {
            log.error({ err, name }, 'release failed');
          }
        }
      })();
      return running;
    },
  };

  if (options.exitOnSignal !== false) {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      process.once(signal, () => {
        void shutdown.run(signal).then(() => process.exit(0));
      });
    }
  }
  return shutdown;
}
