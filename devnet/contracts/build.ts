/**
 * Compiles the devnet's own Solidity fixtures with solc from npm (imports such as
 * `@openzeppelin/contracts/...` resolved from node_modules) and writes one artifact per
 * deployable contract to devnet/contracts/artifacts/<Name>.json ({contractName, sourceName, abi,
 * bytecode}). The artifacts are committed, so nothing compiles at test time; run this only after
 * editing a .sol file:  npx tsx devnet/contracts/build.ts
 */
import { createRequire } from 'node:module';
import { readdirSync, readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

type SolcOutput = {
  errors?: Array<{ severity: 'error' | 'warning' | 'info'; formattedMessage: string }>;
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
};
type Solc = {
  compile(input: string, callbacks?: { import: (path: string) => { contents: string } | { error: string } }): string;
  version(): string;
};

const solc = createRequire(import.meta.url)('solc') as Solc;
const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, 'artifacts');

const sources = Object.fromEntries(
  readdirSync(here)
    .filter((f) => f.endsWith('.sol'))
    .sort()
    .map((f) => [f, { content: readFileSync(join(here, f), 'utf8') }]),
);

const input = {
  language: 'Solidity',
  sources,
  settings: {
    optimizer: { enabled: true, runs: 200 },
    evmVersion: 'cancun',
    // No metadata hash: the bytecode stays identical when only comments change.
    metadata: { bytecodeHash: 'none' },
    outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
  },
};

const require = createRequire(import.meta.url);
const findImports = (path: string): { contents: string } | { error: string } => {
  try {
    return { contents: readFileSync(require.resolve(path), 'utf8') };
  } catch {
    return { error: `not found: ${path}` };
  }
};
const output = JSON.parse(solc.compile(JSON.stringify(input), { import: findImports })) as SolcOutput;
for (const e of output.errors ?? []) process.stderr.write(`${e.formattedMessage}\n`);
if ((output.errors ?? []).some((e) => e.severity === 'error')) process.exit(1);

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
let written = 0;
for (const [sourceName, contracts] of Object.entries(output.contracts)) {
  if (!(sourceName in sources)) continue; // an imported package's contracts: theirs, not fixtures
  for (const [contractName, c] of Object.entries(contracts)) {
    if (!c.evm.bytecode.object) continue; // abstract contracts and interfaces
    const artifact = { contractName, sourceName, compiler: `solc ${solc.version()}`, abi: c.abi, bytecode: `0x${c.evm.bytecode.object}` };
    writeFileSync(join(outDir, `${contractName}.json`), `${JSON.stringify(artifact, null, 1)}\n`);
    written++;
  }
}
process.stdout.write(`wrote ${written} artifacts to ${outDir} (solc ${solc.version()})\n`);
