// After `tsc`, copy the non-TypeScript files the compiled processes read at run time (into dist/, or
// the output folder given as the first argument: the benchmarks build the Procfile's programs elsewhere).
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const outDir = process.argv[2] ?? 'dist';
for (const dir of ['shared/db/migrations', 'devnet/contracts/artifacts', 'server/status/public', 'server/graphql/public']) {
  if (existsSync(dir)) cpSync(dir, join(outDir, dir), { recursive: true });
}
