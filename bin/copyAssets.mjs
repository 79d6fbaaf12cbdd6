// After `tsc`, copy the non-TypeScript files the compiled processes read at run time.
import { cpSync, existsSync } from 'node:fs';

for (const dir of ['shared/db/migrations', 'devnet/contracts/artifacts', 'server/status/public']) {
  if (existsSync(dir)) cpSync(dir, `dist/${dir}`, { recursive: true });
}
