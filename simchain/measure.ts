/**
 * How fast the simulator serves a chain the way opscan fetches it: per range of `--range` blocks,
 * the EntryPoint eth_getLogs, the token-topic eth_getLogs (INDEXER_TRANSFERS=known), the range's
 * headers, then the receipt and transaction of every bundle transaction, in JSON-RPC batches of
 * 100. The simulator runs as a child process; its CPU time comes from /proc.
 *
 *   npx tsx simchain/measure.ts [--profiles base,polygon,arbitrum,mainnet] [--blocks 300] [--range 50] [--no-tokens]
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { TOKEN_TOPICS } from '../indexer/sync/fetchRange.js';
import { findProfile } from './profiles.js';
import { CANONICAL_ENTRYPOINTS, TOPICS } from '../shared/chain/constants.js';

const { values } = parseArgs({
  options: {
    profiles: { type: 'string', default: 'base,polygon,arbitrum,mainnet' },
    blocks: { type: 'string', default: '300' },
    range: { type: 'string', default: '50' },
    'no-tokens': { type: 'boolean', default: false },
  },
});
const say = (text: string): boolean => process.stdout.write(`${text}\n`);

/** User + system CPU seconds of a process (clock ticks of 1/100 s). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

type Call = { method: string; params: unknown[] };

async function post(url: string, body: unknown): Promise<{ json: unknown; bytes: number }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { json: JSON.parse(text) as unknown, bytes: text.length };
}

async function batch(url: string, calls: Call[]): Promise<number> {
  let bytes = 0;
  for (let i = 0; i < calls.length; i += 100) {
    const body = calls.slice(i, i + 100).map((c, j) => ({ jsonrpc: '2.0', id: j, ...c }));
    bytes += (await post(url, body)).bytes;
  }
  return bytes;
}

async function measure(profileName: string, blocks: number, range: number, tokens: boolean): Promise<void> {
  const profile = findProfile(profileName);
  const from = profile.defaultFromBlock;
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'simchain/main.ts',
      '--profile',
      profileName,
      '--fast',
      '--from-block',
      String(from),
      '--blocks',
      String(blocks),
      '--port',
      '0',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /(http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`simchain exited with ${code}`)));
  });
  try {
    const entryPoints = [CANONICAL_ENTRYPOINTS['v0.6'], CANONICAL_ENTRYPOINTS['v0.7'], CANONICAL_ENTRYPOINTS['v0.8']];
    const cpuBefore = cpuSeconds(child.pid!);
    const started = performance.now();
    let bytes = 0;
    let ops = 0;
    const hex = (n: number): string => `0x${n.toString(16)}`;
    for (let start = from; start < from + blocks; start += range) {
      const end = Math.min(from + blocks - 1, start + range - 1);
      const epLogs = await post(url, {
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_getLogs',
        params: [{ fromBlock: hex(start), toBlock: hex(end), address: entryPoints }],
      });
      bytes += epLogs.bytes;
      const logs = (epLogs.json as { result: Array<{ transactionHash: string; topics: string[] }> }).result;
      if (tokens) {
        bytes += (
          await post(url, {
            jsonrpc: '2.0',
            id: 2,
            method: 'eth_getLogs',
            params: [{ fromBlock: hex(start), toBlock: hex(end), topics: [TOKEN_TOPICS] }],
          })
        ).bytes;
      }
      const txs = [...new Set(logs.map((l) => l.transactionHash))];
      ops += logs.filter((l) => l.topics[0] === TOPICS.userOperationEvent).length;
      const calls: Call[] = [
        ...txs.flatMap((h) => [
          { method: 'eth_getTransactionReceipt', params: [h] },
          { method: 'eth_getTransactionByHash', params: [h] },
        ]),
        ...Array.from({ length: end - start + 1 }, (_, i) => ({ method: 'eth_getBlockByNumber', params: [hex(start + i), false] })),
      ];
      bytes += await batch(url, calls);
    }
    const seconds = (performance.now() - started) / 1000;
    const cpu = cpuSeconds(child.pid!) - cpuBefore;
    say(
      `${profile.name.padEnd(13)} ${blocks} blocks in ${seconds.toFixed(2)} s: ${(blocks / seconds).toFixed(1)} blocks/s, ` +
        `${((cpu * 1000) / blocks).toFixed(2)} ms simulator CPU/block, ${(ops / blocks).toFixed(1)} ops/block, ${(bytes / blocks / 1024).toFixed(0)} KiB/block` +
        `${tokens ? ' (token logs included)' : ''}`,
    );
  } finally {
    child.kill('SIGTERM');
  }
}

for (const name of values.profiles.split(','))
  await measure(name.trim(), Number(values.blocks), Number(values.range), !values['no-tokens']);
