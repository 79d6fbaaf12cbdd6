/**
 * npm run devnet -- --ops N [--out FILE] [--port P] [--days D] [--seed S] [--continuous MS]
 *
 * Starts anvil, deploys the EntryPoints and fixtures, generates N ops (printing the rate), writes
 * the ground truth to FILE if asked, then keeps serving (optionally adding a block of new ops every
 * MS milliseconds) until SIGINT/SIGTERM, when it stops anvil.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { defaultGenesisTimestamp, generate, startContinuous, startDevnet, type ContinuousTraffic } from './index.js';

const { values } = parseArgs({
  options: {
    ops: { type: 'string', default: '500' },
    out: { type: 'string' },
    port: { type: 'string' },
    days: { type: 'string', default: '3' },
    seed: { type: 'string', default: '1' },
    continuous: { type: 'string' },
  },
});
const ops = Number(values.ops);
const days = Number(values.days);
if (!Number.isInteger(ops) || ops < 0 || !Number.isInteger(days) || days < 1) {
  console.error('usage: npm run devnet -- --ops N [--out FILE] [--port P] [--days D] [--seed S] [--continuous MS]');
  process.exit(2);
}

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
