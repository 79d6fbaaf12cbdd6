/**
 * npm run devnet -- --ops N [--out FILE] [--port P] [--days D] [--seed S] [--continuous MS]
 * npm run devnet -- --realistic --ops N [--out DIR] [--port P] [--seed S]
 *
 * Starts anvil, deploys the EntryPoints and fixtures, generates N ops (printing the rate), writes
 * the ground truth to FILE if asked, then keeps serving (optionally adding a block of new ops every
 * MS milliseconds) until SIGINT/SIGTERM, when it stops anvil.
 *
 * --realistic: real-world traffic instead (devnet/realistic): two Alto bundler processes, real
 * account implementations and paymasters, ops built by viem/permissionless and sent only through
 * the bundlers; the truth, with each op's bundler receipt, goes to DIR/truth.json. Prints the
 * chain's and the bundlers' URLs and keeps all of them running until stopped.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultGenesisTimestamp, generate, startContinuous, startDevnet, type ContinuousTraffic } from './index.js';
import { generateRealistic, realisticTruthFile, startRealisticDevnet } from './realistic/index.js';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '500' },
    out: { type: 'string' },
    port: { type: 'string' },
    days: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
    continuous: { type: 'string' },
    realistic: { type: 'boolean', default: false },
  },
});
const ops = Number(values.ops);
const days = Number(values.days);
if (!Number.isInteger(ops) || ops < 0 || !Number.isInteger(days) || days < 1) {
  console.error('usage: npm run devnet -- --ops N [--out FILE] [--port P] [--days D] [--seed S] [--continuous MS]');
  console.error('       npm run devnet -- --realistic --ops N [--out DIR] [--port P] [--seed S]');
  process.exit(2);
}
if (values.realistic) await runRealistic();

const devnet = await startDevnet({ port: values.port ? Number(values.port) : undefined, genesisTimestamp: defaultGenesisTimestamp(days) });
let traffic: ContinuousTraffic | undefined;
let stopping = false;
const shutdown = async (signal: string): Promise<void> => {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: stopping`);
  await traffic?.stop();
  await devnet.stop();
  process.exit(0);
};
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));

try {
  console.log(`devnet RPC: ${devnet.rpcUrl} (chain id ${devnet.chainId})`);
  const started = performance.now();
  const truth = await generate(devnet, { ops, days, seed: Number(values.seed) });
  const seconds = (performance.now() - started) / 1000;
  const blocks = new Set(truth.userOps.map((o) => o.blockNumber)).size;
  console.log(
    `generated ${truth.userOps.length} ops in ${truth.bundles.length} bundles over ${blocks} blocks and ${truth.days.length} days: ` +
      `${seconds.toFixed(2)} s, ${(truth.userOps.length / seconds).toFixed(0)} ops/s`,
  );
  for (const [version, address] of Object.entries(truth.entryPoints)) console.log(`EntryPoint ${version}: ${address}`);
  if (values.out) {
    writeFileSync(values.out, `${JSON.stringify(truth, null, 1)}\n`);
    console.log(`ground truth written to ${values.out}`);
  }
  if (values.continuous) {
    traffic = startContinuous(devnet, { intervalMs: Number(values.continuous) });
    console.log(`adding a block of ops every ${values.continuous} ms`);
  }
  console.log(`serving ${devnet.rpcUrl}; Ctrl-C to stop`);
} catch (err) {
  console.error(err);
  await devnet.stop();
  process.exit(1);
}

async function runRealistic(): Promise<void> {
  const started = performance.now();
  const rd = await startRealisticDevnet({ port: values.port ? Number(values.port) : undefined, seed: Number(values.seed) });
  const stop = async (signal: string): Promise<void> => {
    console.log(`${signal}: stopping`);
    await rd.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
  try {
    console.log(`chain RPC: ${rd.devnet.rpcUrl} (chain id ${rd.devnet.chainId})`);
    for (const b of rd.bundlers) console.log(`bundler: ${b.url} (${b.name}, executors ${b.executors.join(', ')})`);
    for (const [version, address] of Object.entries(rd.contracts.entryPoints)) console.log(`EntryPoint ${version}: ${address}`);
    console.log(`ready in ${((performance.now() - started) / 1000).toFixed(1)} s; sending ${ops} ops through the bundlers`);
    const sending = performance.now();
    let lastReport = 0;
    const truth = await generateRealistic(rd, {
      ops,
      onProgress: (done) => {
        if (done - lastReport >= 50 || done === ops) {
          lastReport = done;
          console.log(`  ${done}/${ops} ops included`);
        }
      },
    });
    const seconds = (performance.now() - sending) / 1000;
    const byType = new Map<string, number>();
    for (const r of rd.records) byType.set(r.accountType, (byType.get(r.accountType) ?? 0) + 1);
    console.log(
      `${truth.userOps.length} ops in ${truth.bundles.length} bundles: ${seconds.toFixed(1)} s, ${(truth.userOps.length / seconds).toFixed(1)} ops/s; ` +
        [...byType].map(([t, n]) => `${t} ${n}`).join(', '),
    );
    const implementations = new Set(rd.records.map((r) => r.implementation));
    const entryPoints = [...new Set(truth.userOps.map((o) => o.entryPointVersion))].sort();
    console.log(`${implementations.size} implementations on EntryPoint ${entryPoints.join(', ')}: ${[...implementations].join(', ')}`);
    if (values.out) {
      mkdirSync(values.out, { recursive: true });
      const file = join(values.out, 'truth.json');
      writeFileSync(file, `${JSON.stringify(realisticTruthFile(rd), null, 1)}\n`);
      console.log(`truth written to ${file}`);
    }
    console.log('serving the chain and the bundlers; Ctrl-C to stop');
  } catch (err) {
    console.error(err);
    await rd.stop();
    process.exit(1);
  }
  await new Promise(() => undefined); // keep serving until a signal stops it
}
