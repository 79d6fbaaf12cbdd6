import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { DispatcherOptions } from '../../../webhooks/startDispatcher.js';

const CHILD = fileURLToPath(new URL('./dispatcherChild.ts', import.meta.url));

/** A dispatcher in a process of its own (dispatcherChild.ts), resolved once it is running; `env` adds to its environment. */
export function spawnDispatcher(databaseUrl: string, options: DispatcherOptions, env: Record<string, string> = {}): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      NETWORKS: 'devnet',
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      LOG_LEVEL: 'silent',
      DISPATCHER_OPTIONS: JSON.stringify(options),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`dispatcher child exited with ${code}`)));
  });
}
