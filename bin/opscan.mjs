#!/usr/bin/env node
// `npx opscan`: the compiled CLI (dist/, what a deployment has), or in a checkout with the dev
// dependencies installed, the TypeScript source through tsx (so it is never a stale build).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const source = join(here, 'opscan.ts');
const compiled = join(here, '..', 'dist', 'bin', 'opscan.js');
let tsx = null;
try {
  tsx = await import('tsx/esm/api');
} catch {
  // No dev dependencies (a deployment): run the build.
}
if (tsx && existsSync(source)) {
  tsx.register();
  await import(pathToFileURL(source).href);
} else if (existsSync(compiled)) {
  await import(pathToFileURL(compiled).href);
} else {
  console.error('opscan: no build found; run `npm run build` (or `npm install` for the development setup)');
  process.exitCode = 1;
}
