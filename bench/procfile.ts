/**
 * The Procfile's processes as production runs them: this tree compiled as `npm run build` compiles
 * it (`tsc -p tsconfig.build.json` and bin/copyAssets.mjs), into a scratch folder so dist/ is left
 * alone, and each process's `node` command line (flags included) pointed at it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export type ProcfileBuild = {
  /** `node`'s arguments for the Procfile line `name:` (e.g. web, indexer, dispatcher). */
  args(name: string): string[];
  cleanup(): void;
};

/**
 * `commit` (an A/B's baseline): that commit's files, taken with `git archive` into bench/out,
 * compiled instead of the working tree's.
 */
export function buildProcfile(commit?: string): ProcfileBuild {
  // Inside the tree (bench/out is ignored by git) so that the compiled files find node_modules.
  mkdirSync(join(ROOT, 'bench/out'), { recursive: true });
  const sourceDir = commit ? mkdtempSync(join(ROOT, 'bench/out/source-')) : ROOT;
  if (commit) execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C ${sourceDir}`], { cwd: ROOT, stdio: 'inherit' });
  const lines = readFileSync(join(sourceDir, 'Procfile'), 'utf8').split('\n');
  const outDir = mkdtempSync(join(ROOT, 'bench/out/build-'));
  try {
    execFileSync(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(sourceDir, 'tsconfig.build.json'), '--outDir', outDir],
      { cwd: sourceDir, stdio: 'ignore' },
    );
  } catch {
    // tsc reports type errors but still emits; a missing program is the failure that matters.
  }
  execFileSync(process.execPath, [join(sourceDir, 'bin/copyAssets.mjs'), outDir], { cwd: sourceDir, stdio: 'inherit' });
  return {
    args(name) {
      const line = lines.find((l) => l.startsWith(`${name}:`));
      const words =
        line
          ?.slice(name.length + 1)
          .trim()
          .split(/\s+/) ?? [];
      if (words[0] !== 'node' || !words.at(-1)?.startsWith('dist/')) throw new Error(`unexpected Procfile ${name} line: ${line}`);
      const program = join(outDir, words.at(-1)!.slice('dist/'.length));
      readFileSync(program); // throws if the build did not emit it
      return [...words.slice(1, -1), program];
    },
    cleanup() {
      rmSync(outDir, { recursive: true, force: true });
      if (commit) rmSync(sourceDir, { recursive: true, force: true });
    },
  };
}
