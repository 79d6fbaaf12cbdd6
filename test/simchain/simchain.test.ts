/**
 * The chain simulator: deterministic, self-consistent (receipts, logs, headers, lookups), its
 * bundles decoded by opscan's own decoders to its truth, its plans' limits answered with their
 * messages, and newHeads pushed over WebSocket. No opscan indexer involved.
 */
import { execFileSync } from 'node:child_process';
import { expect } from 'chai';
import { WebSocket } from 'undici';
import { encodeHandleOps as ethersHandleOps, type EpVersion } from '../../devnet/userop.js';
import { decoderFor } from '../../indexer/decode/entryPointDecoder.js';
import { decodeTransaction } from '../../indexer/decode/decodeTransaction.js';
import { userOpHashOf } from '../../indexer/decode/userOpHash.js';
import type { RpcReceipt, RpcTransaction } from '../../indexer/decode/chainTypes.js';
import { decodeAccountCalls } from '../../shared/calldata/accountCalls.js';
import type { EntryPointVersion } from '../../shared/networks.js';
import { SimChainModel } from '../../simchain/chain.js';
import { encodeHandleOps } from '../../simchain/materialize.js';
import { findProfile } from '../../simchain/profiles.js';
import { startSimChain, type SimChain } from '../../simchain/server.js';
import { TOPICS } from '../../shared/chain/constants.js';

const FROM = 25_000_000;
const BLOCKS = 30;

/* eslint-disable @typescript-eslint/no-explicit-any -- JSON-RPC answers, read loosely */
type Json = Record<string, any>;

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

async function rpc(chain: SimChain, method: string, params: unknown[]): Promise<any> {
  const { json } = await post(chain.url, { jsonrpc: '2.0', id: 1, method, params });
  if (json.error) throw new Error(`${method}: ${json.error.message}`);
  return json.result;
}

const hex = (n: number): string => `0x${n.toString(16)}`;

describe('simchain', function () {
  let chain: SimChain;
  before(async () => {
    chain = await startSimChain({ profile: 'base', fromBlock: FROM, blocks: BLOCKS, blockTimeMs: 0, accounts: 5_000 });
  });
  after(() => chain.close());

  it('generates the same block bytes from the same seed, in another process too', async () => {
    const a = new SimChainModel({ profile: findProfile('base'), accounts: 5_000 });
    const b = new SimChainModel({ profile: findProfile('base'), accounts: 5_000 });
    const n = FROM + 7;
    const bytes = (m: SimChainModel): string => JSON.stringify(m.transactions(n).map((t) => [t.tx, t.receipt]));
    expect(bytes(a)).to.equal(bytes(b));
    expect(JSON.stringify(a.header(n, true))).to.equal(JSON.stringify(b.header(n, true)));
    const other = new SimChainModel({ profile: findProfile('base'), accounts: 5_000, seed: 2 });
    expect(other.header(n, false).hash).to.not.equal(a.header(n, false).hash);

    const script = `import { startSimChain } from './simchain/server.ts';
      const c = await startSimChain({ profile: 'base', fromBlock: ${FROM}, blocks: ${BLOCKS}, blockTimeMs: 0, accounts: 5000 });
      const t = c.truth(${FROM}, ${FROM + BLOCKS - 1});
      process.stdout.write(JSON.stringify({ head: c.model.header(${FROM + BLOCKS - 1}, false).hash, ops: t.userOps.map((o) => o.userOpHash) }));
      await c.close();`;
    const out = JSON.parse(execFileSync('npx', ['tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })) as {
      head: string;
      ops: string[];
    };
    expect(out.head).to.equal((await rpc(chain, 'eth_getBlockByNumber', ['latest', false])).hash);
    expect(out.ops).to.deep.equal(chain.truth(FROM, FROM + BLOCKS - 1).userOps.map((o) => o.userOpHash));
  });

  it('serves receipts, logs, headers and transactions that agree with each other', async () => {
    const entryPoints = Object.values(chain.entryPoints);
    let parent: string | null = null;
    for (let n = FROM; n < FROM + 6; n++) {
      const header = await rpc(chain, 'eth_getBlockByNumber', [hex(n), false]);
      if (parent) expect(header.parentHash).to.equal(parent);
      parent = header.hash;
      expect(await rpc(chain, 'eth_getBlockByHash', [header.hash, false])).to.deep.equal(header);
      const receipts: Json[] = await rpc(chain, 'eth_getBlockReceipts', [hex(n)]);
      expect(receipts.map((r) => r.transactionHash)).to.deep.equal(header.transactions);
      expect(receipts.reduce((s, r) => s + BigInt(r.gasUsed), 0n)).to.equal(BigInt(header.gasUsed));
      const logs = receipts.flatMap((r) => r.logs as Json[]);
      expect(logs.map((l) => Number(l.logIndex))).to.deep.equal(logs.map((_, i) => i));
      expect(await rpc(chain, 'eth_getLogs', [{ blockHash: header.hash }])).to.deep.equal(logs);
      expect(await rpc(chain, 'eth_getLogs', [{ fromBlock: hex(n), toBlock: hex(n), address: entryPoints }])).to.deep.equal(
        logs.filter((l) => entryPoints.includes(l.address)),
      );
      const tokenTopics = [TOPICS.transfer, TOPICS.transferSingle, TOPICS.transferBatch];
      expect(await rpc(chain, 'eth_getLogs', [{ fromBlock: hex(n), toBlock: hex(n), topics: [tokenTopics] }])).to.deep.equal(
        logs.filter((l) => tokenTopics.includes(l.topics[0])),
      );
      for (const r of receipts.slice(0, 5)) {
        const tx = await rpc(chain, 'eth_getTransactionByHash', [r.transactionHash]);
        expect([tx.blockHash, tx.from, tx.to, tx.transactionIndex]).to.deep.equal([header.hash, r.from, r.to, r.transactionIndex]);
        expect(await rpc(chain, 'eth_getTransactionReceipt', [r.transactionHash])).to.deep.equal(r);
      }
    }
    expect(await rpc(chain, 'eth_getBlockByNumber', [hex(FROM + BLOCKS), false])).to.equal(null);
    const { json } = await post(chain.url, { jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: ['0x00'] });
    expect(json.error).to.deep.equal({ code: -32601, message: 'the method eth_sendRawTransaction does not exist/is not available' });
    const bad = await post(chain.url, { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: ['yesterday', false] });
    expect(bad.json.error.message).to.match(/invalid argument 0/);
  });

  it('encodes handleOps as the EntryPoint ABI does, and opscan decodes every op to the truth', async () => {
    const truth = chain.truth(FROM, FROM + BLOCKS - 1);
    expect(truth.userOps.length).to.be.greaterThan(20);
    const versions = new Map<string, EntryPointVersion>(Object.entries(chain.entryPoints).map(([v, a]) => [a, v as EntryPointVersion]));
    const byHash = new Map(truth.userOps.map((o) => [o.userOpHash, o]));
    let checked = 0;
    for (const bundle of truth.bundles) {
      const tx: RpcTransaction = await rpc(chain, 'eth_getTransactionByHash', [bundle.transactionHash]);
      const receipt: RpcReceipt = await rpc(chain, 'eth_getTransactionReceipt', [bundle.transactionHash]);
      const version = versions.get(bundle.entryPoint)! as EpVersion;
      const call = decoderFor(version).decodeHandleOps(tx.input)!;
      expect(call.beneficiary).to.equal(bundle.beneficiary);
      const events = receipt.logs.filter((l) => l.topics[0] === TOPICS.userOperationEvent).map((l) => l.topics[1]);
      expect(call.ops.map((op) => userOpHashOf(op, version, bundle.entryPoint, chain.chainId))).to.deep.equal(events);
      expect(events).to.deep.equal(bundle.userOpHashes);
      const ops = call.ops.map((op) => byHash.get(userOpHashOf(op, version, bundle.entryPoint, chain.chainId)!)!);
      const structs = ops.map((o) => ({ ...o, nonce: BigInt(o.nonce), callGasLimit: BigInt(o.callGasLimit), verificationGasLimit: BigInt(o.verificationGasLimit), preVerificationGas: BigInt(o.preVerificationGas), maxFeePerGas: BigInt(o.maxFeePerGas), maxPriorityFeePerGas: BigInt(o.maxPriorityFeePerGas) })); // prettier-ignore
      expect(encodeHandleOps(version, structs, bundle.beneficiary)).to.equal(
        ethersHandleOps(version, structs, bundle.beneficiary).toLowerCase(),
      );
      const decoded = decodeTransaction(
        { receipt, tx, trace: undefined, blockTime: bundle.blockTime },
        { chainId: chain.chainId, entryPoints: versions, traces: 'off' },
      );
      for (const d of decoded.userOps) {
        const want = byHash.get(d.userOpHash)!;
        expect(d.calls.map((c) => ({ target: c.target, value: c.value.toString(), data: c.data }))).to.deep.equal(want.calls);
        expect(decodeAccountCalls(want.callData, want.sender).length).to.equal(want.calls.length);
        expect([d.sender, d.nonce.toString(), d.success, d.factory, d.paymaster, d.logIndex, d.decodeStatus]).to.deep.equal([want.sender, want.nonce, want.success, want.factory, want.paymaster, want.logIndex, 'ok']); // prettier-ignore
        expect(decoded.transfers.filter((t) => t.userOpHash === d.userOpHash).length).to.equal(
          truth.transfers.filter((t) => t.userOpHash === d.userOpHash).length,
        );
        checked++;
      }
      expect(decoded.bundleTx.fee.toString()).to.equal(bundle.transactionFee);
    }
    expect(checked).to.equal(truth.userOps.length);
    const trace = await rpc(chain, 'debug_traceTransaction', [truth.bundles[0]!.transactionHash, { tracer: 'callTracer' }]);
    expect(trace.to).to.equal(truth.bundles[0]!.entryPoint);
    const plain = chain.truth.plainTransfers(FROM, FROM + BLOCKS - 1, (a) => truth.known.has(a));
    expect(plain.every((p) => truth.known.has(p.from) || truth.known.has(p.to))).to.equal(true);
  });

  describe('plans', () => {
    it('tiny: caps log ranges, results and batches with the providers’ messages', async () => {
      const tiny = await startSimChain({ profile: 'base', fromBlock: FROM, blocks: 200, blockTimeMs: 0, accounts: 5_000, plan: 'tiny' });
      try {
        const wide = await post(tiny.url, {
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getLogs',
          params: [{ fromBlock: hex(FROM), toBlock: hex(FROM + 150) }],
        });
        expect(wide.json.error).to.deep.equal({ code: -32602, message: 'range 151 exceeds limit of 100' });
        const full = await post(tiny.url, {
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getLogs',
          params: [{ fromBlock: hex(FROM), toBlock: hex(FROM + 1) }],
        });
        expect(full.json.error).to.deep.equal({
          code: -32005,
          message: `query returned more than 200 results. Try with this block range [${hex(FROM)}, ${hex(FROM)}].`,
        });
        const ops = await post(tiny.url, {
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getLogs',
          params: [{ fromBlock: hex(FROM), toBlock: hex(FROM + 1), address: Object.values(tiny.entryPoints) }],
        });
        expect(ops.json.result).to.be.an('array');
        const batch = Array.from({ length: 11 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_chainId', params: [] }));
        expect((await post(tiny.url, batch)).json.error.message).to.equal('batch size 11 exceeds the limit of 10');
        expect((await post(tiny.url, batch.slice(0, 10))).json).to.have.length(10);
      } finally {
        await tiny.close();
      }
    });

    it('public: refuses any batch with one error object, has no debug API, rate-limits with 429', async () => {
      const pub = await startSimChain({ profile: 'arbitrum', blocks: 5, blockTimeMs: 0, accounts: 5_000, plan: 'public' });
      try {
        const batch = [{ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }];
        expect((await post(pub.url, batch)).json).to.deep.equal({
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: 'batch requests are not supported' },
        });
        const hash = pub.model.header(pub.head(), false).transactions as string[];
        const trace = await post(pub.url, {
          jsonrpc: '2.0',
          id: 1,
          method: 'debug_traceTransaction',
          params: [hash[0], { tracer: 'callTracer' }],
        });
        expect(trace.json.error.code).to.equal(-32601);
        const statuses = await Promise.all(
          Array.from({ length: 40 }, () => post(pub.url, { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] })),
        );
        expect(statuses.some((s) => s.status === 429)).to.equal(true);
      } finally {
        await pub.close();
      }
    });

    it('alchemy: a range within 2K blocks is never capped, even a spam block over 10K logs', async () => {
      const al = await startSimChain({
        profile: 'polygon',
        fromBlock: 65_000_000,
        blocks: 3,
        blockTimeMs: 0,
        accounts: 5_000,
        plan: 'alchemy',
      });
      try {
        // Block 65,000,000 is a spam block (> 10,000 logs): within 2K blocks it is served whole.
        const spam = await post(al.url, {
          jsonrpc: '2.0',
          id: 1,
          method: 'eth_getLogs',
          params: [{ fromBlock: hex(65_000_000), toBlock: hex(65_000_000) }],
        });
        expect(spam.json.result.length).to.be.greaterThan(10_000);
      } finally {
        await al.close();
      }
    });
  });

  it('adds its round-trip time to every HTTP request, requests in flight overlapping, and serves a precomputed history byte for byte', async () => {
    // Long enough that this machine's scheduling (a loaded 2-core VM) stays well inside the margins.
    const RTT = 300;
    const far = await startSimChain({
      profile: 'base',
      fromBlock: FROM,
      blocks: 4,
      blockTimeMs: 0,
      accounts: 5_000,
      rttMs: RTT,
      precompute: 'all',
    });
    try {
      const body = (n: number) => [
        { jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [hex(n), true] },
        { jsonrpc: '2.0', id: 2, method: 'eth_getLogs', params: [{ fromBlock: hex(n), toBlock: hex(n) }] },
        { jsonrpc: '2.0', id: 3, method: 'eth_getBlockReceipts', params: [hex(n)] },
      ];
      const header = (n: number) => ({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByNumber', params: [hex(n), false] });
      const t0 = performance.now();
      await post(far.url, header(FROM));
      expect(performance.now() - t0, 'one request').to.be.at.least(RTT);
      const t1 = performance.now();
      await Promise.all([0, 1, 2, 3].map((i) => post(far.url, header(FROM + i))));
      expect(performance.now() - t1, 'four requests at once: less than four round trips one after the other').to.be.below(RTT * 4);
      const t2 = performance.now();
      await post(`${far.url}/rtt/0`, header(FROM));
      expect(performance.now() - t2, 'a request to /rtt/0').to.be.below(RTT);
      const t3 = performance.now();
      await post(`${chain.url}/rtt/${RTT}`, header(FROM));
      expect(performance.now() - t3, `a request to /rtt/${RTT} of a near chain`).to.be.at.least(RTT);
      // The precomputed chain (cached JSON) answers what the chain generating on demand answers, twice alike.
      for (let i = 0; i < 4; i++) {
        const answer = (await post(far.url, body(FROM + i))).json;
        expect(answer).to.deep.equal((await post(chain.url, body(FROM + i))).json);
        expect((await post(far.url, body(FROM + i))).json).to.deep.equal(answer);
      }
      const refused = await startSimChain({ profile: 'base', rttMs: -1 }).then(
        (c) => c.close().then(() => null),
        (err: Error) => err.message,
      );
      expect(refused).to.match(/rttMs/);
    } finally {
      await far.close();
    }
  });

  it('announces new heads over WebSocket', async () => {
    const live = await startSimChain({ profile: 'arbitrum', blocks: 1, blockTimeMs: 50, accounts: 5_000 });
    const ws = new WebSocket(live.wsUrl);
    try {
      const heads: Json[] = [];
      const subscribed = new Promise<string>((resolve) => {
        ws.onmessage = (e) => {
          const m = JSON.parse(String(e.data));
          if (m.id === 1) resolve(m.result);
          else if (m.method === 'eth_subscription') heads.push(m.params.result);
        };
      });
      await new Promise((resolve) => (ws.onopen = resolve));
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
      expect(await subscribed).to.match(/^0x[0-9a-f]+$/);
      while (heads.length < 3) await new Promise((r) => setTimeout(r, 20));
      const numbers = heads.map((h) => Number(h.number));
      expect(numbers[1]! - numbers[0]!).to.equal(1);
      expect(heads[1]!.parentHash).to.equal(heads[0]!.hash);
    } finally {
      ws.close();
      await live.close();
    }
  });

  it('stalls its head, then jumps by every block produced meanwhile', async () => {
    const live = await startSimChain({ profile: 'base', blocks: 1, blockTimeMs: 50, accounts: 5_000 });
    const blockNumber = async () => Number(await rpc(live, 'eth_blockNumber', []));
    try {
      live.stall();
      const stalledAt = live.head();
      await new Promise((r) => setTimeout(r, 400));
      expect(live.head(), 'the head while stalled').to.equal(stalledAt);
      expect(await blockNumber(), 'eth_blockNumber while stalled').to.equal(stalledAt);
      const jump = live.resume();
      expect(jump, 'blocks produced in 400 ms at 50 ms').to.be.within(1, 9);
      expect(live.head()).to.equal(stalledAt + jump);
      expect(await blockNumber()).to.be.at.least(stalledAt + jump);
      const after = live.head();
      await new Promise((r) => setTimeout(r, 200));
      expect(live.head(), 'advancing again').to.be.above(after);
    } finally {
      await live.close();
    }
  });
});
