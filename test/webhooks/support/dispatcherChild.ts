// A dispatcher in its own process, for the crash and load tests: the parent SIGKILLs it mid-batch,
// or starves it (STALL_EVERY_MS / STALL_FOR_MS: its event loop is held busy that long that often,
// as on a machine whose cores are taken: timers fire late, leases run out mid-send).
import { loadConfig, dispatcherEnvSchema } from '../../../shared/config.js';
import { createDb } from '../../../shared/db/client.js';
import { createLogger } from '../../../shared/log.js';
import { startDispatcher, type DispatcherOptions } from '../../../webhooks/startDispatcher.js';

const config = loadConfig(dispatcherEnvSchema, process.env);
const db = await createDb({ databaseUrl: config.DATABASE_URL, max: 10 });
const options = JSON.parse(process.env.DISPATCHER_OPTIONS ?? '{}') as DispatcherOptions;
await startDispatcher({ db, config, log: createLogger({ level: 'silent', name: 'child' }), options });
const stallEvery = Number(process.env.STALL_EVERY_MS ?? 0);
const stallFor = Number(process.env.STALL_FOR_MS ?? 0);
if (stallEvery > 0 && stallFor > 0) {
  setInterval(() => {
    const until = performance.now() + stallFor * (0.5 + Math.random());
    while (performance.now() < until) {
      // busy: the process gets no turn of its event loop
    }
  }, stallEvery);
}
process.stdout.write('ready\n');
