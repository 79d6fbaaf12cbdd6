// A dispatcher in its own process, for the crash test: the parent SIGKILLs it mid-batch.
import { loadConfig, dispatcherEnvSchema } from '../../../shared/config.js';
import { createDb } from '../../../shared/db/client.js';
import { createLogger } from '../../../shared/log.js';
import { startDispatcher, type DispatcherOptions } from '../../../webhooks/startDispatcher.js';

const config = loadConfig(dispatcherEnvSchema, process.env);
const db = await createDb({ databaseUrl: config.DATABASE_URL, max: 10 });
const options = JSON.parse(process.env.DISPATCHER_OPTIONS ?? '{}') as DispatcherOptions;
await startDispatcher({ db, config, log: createLogger({ level: 'silent', name: 'child' }), options });
process.stdout.write('ready\n');
