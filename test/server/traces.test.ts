/**
 * getTrxTraces and getUserOpTraces on indexed devnet traffic: frames equal to the anvil node's own
 * debug_traceTransaction, methods and decoded inputs equal to the ground truth, stages where the
 * EntryPoint puts them, and the failure answers (bad input, unknown op/tx, dead node, no debug API).
 */
import { expect } from 'chai';
import request from 'supertest';
import { z } from 'zod';
import type { TruthUserOp } from '../../devnet/index.js';
import { createApp } from '../../server/app.js';
import type { Deps } from '../../server/context.js';
import { bytea } from '../../shared/db/client.js';
import { traceSchema, type Trace } from '../../shared/models/trace.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { startFaultProxy, type FaultProxy } from '../helpers/faultProxy.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';

type NodeFrame = {
  type: string;
  from: string;
  to?: string;
  input: string;
  output?: string;
  gas: string;
  gasUsed: string;
  value?: string;
  error?: string;
  calls?: NodeFrame[];
};

const trxTracesBody = z.object({ transactionHash: z.string(), chainId: z.number(), trace: z.array(traceSchema) });
const userOpTracesBody = z.object({
  userOpHash: z.string(),
  chainId: z.number(),
  transactionHash: z.string(),
  relevantTraces: z.array(traceSchema),
  traceStatus: z.enum(['ok', 'unavailable']),
  message: z.string().nullable(),
});

function* walk(trace: Trace): Generator<Trace> {
  yield trace;
  for (const child of trace.subtraces) yield* walk(child);
}

/** Our frame equals the node's frame, field by field, down the whole tree; traceAddress is its path. */
function expectSameTree(ours: Trace, node: NodeFrame, path: number[]): void {
  const where = `frame [${path.join(',')}]`;
  expect(ours.traceAddress, where).to.deep.equal(path);
  expect(ours.action, where).to.include({
    from: node.from.toLowerCase(),
    to: (node.to ?? '').toLowerCase(),
    input: node.input.toLowerCase(),
    gas: node.gas.toLowerCase(),
    value: (node.value ?? '0x0').toLowerCase(),
    callType: node.type.toLowerCase(),
  });
  expect(ours.result, where).to.deep.equal({ output: (node.output ?? '0x').toLowerCase(), gasUsed: node.gasUsed.toLowerCase() });
  expect(ours.error, where).to.equal(node.error ?? null);
  expect(ours.subtraces.length, where).to.equal(node.calls?.length ?? 0);
  ours.subtraces.forEach((child, i) => expectSameTree(child, node.calls![i]!, [...path, i]));
}

describe('trace endpoints on indexed devnet traffic', () => {
  const d = useIndexedDevnet({ ops: 150, seed: 5 });
  const opened: Deps[] = [];
  const proxies: FaultProxy[] = [];
  after(async () => {
    await Promise.all(opened.map((deps) => deps.services.close()));
    await Promise.all(proxies.map((p) => p.stop()));
  });

  /** An app over the same database whose devnet RPC URL is `rpcUrl`. */
  async function appWithRpc(rpcUrl: string) {
    const deps = testDeps(d.db, { RPC_URL_DEVNET: rpcUrl });
    opened.push(deps);
    const key = await createTestKey(d.db, 'traces', 1_000_000);
    const app = createApp(deps);
    return (name: string, query: Record<string, unknown>) => request(app).get(`/v0/${name}`).query(query).set('x-api-key', key);
  }

  const nodeTrace = (txHash: string) => d.devnet.rpc.call<NodeFrame>('debug_traceTransaction', [txHash, { tracer: 'callTracer' }]);
  const opsOf = (txHash: string): TruthUserOp[] => d.truth.userOps.filter((o) => o.transactionHash === txHash);

  /** A bundle transaction of each EntryPoint version, and one carrying two bundles. */
  function sampleTransactions(): string[] {
    const bundles = d.truth.bundles;
    const byVersion = ['v0.6', 'v0.7', 'v0.8'].map(
      (v) => bundles.find((b) => b.entryPoint === d.truth.entryPoints[v as 'v0.6'])!.transactionHash,
    );
    const twoBundles = bundles.find((b) => b.bundleIndex > 0)?.transactionHash;
    return [...new Set([...byVersion, ...(twoBundles ? [twoBundles] : [])])];
  }

  it("getTrxTraces answers the node's call tree, frame by frame, placed in its block", async () => {
    const txs = sampleTransactions();
    expect(txs.length).to.be.at.least(3);
    for (const txHash of txs) {
      const res = await d.get('getTrxTraces', { network: 'devnet', trxHash: txHash.toUpperCase().replace('0X', '0x') });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const body = trxTracesBody.parse(res.body);
      expect(body).to.include({ transactionHash: txHash, chainId: d.truth.chainId });
      expect(body.trace).to.have.length(1);
      expectSameTree(body.trace[0]!, await nodeTrace(txHash), []);
      const receipt = await d.devnet.rpc.call<{ blockHash: string; blockNumber: string }>('eth_getTransactionReceipt', [txHash]);
      for (const frame of walk(body.trace[0]!)) {
        expect(frame.blockHash).to.equal(receipt.blockHash.toLowerCase());
        expect(frame.blockNumber).to.equal(Number(receipt.blockNumber));
      }
    }
  });

  it("getTrxTraces names the bundle's calls and places each op's frames in its stages", async () => {
    for (const txHash of sampleTransactions()) {
      const ops = opsOf(txHash);
      const root = trxTracesBody.parse((await d.get('getTrxTraces', { network: 'devnet', trxHash: txHash })).body).trace[0]!;
      const frames = [...walk(root)];
      expect(root.stage).to.equal('bundle');
      // Each bundle's handleOps, with the beneficiary the truth records.
      const bundles = d.truth.bundles.filter((b) => b.transactionHash === txHash);
      const handleOps = frames.filter((f) => f.action.method === 'handleOps');
      expect(handleOps.map((f) => f.action.to)).to.deep.equal(bundles.map((b) => b.entryPoint));
      expect(handleOps.map((f) => f.action.decodedInput!.find((x) => x.name === 'beneficiary')!.value)).to.deep.equal(
        bundles.map((b) => b.beneficiary),
      );
      handleOps.forEach((f, i) => expect((f.action.decodedInput![0]!.value as unknown[]).length).to.equal(bundles[i]!.userOpHashes.length));
      // The EntryPoint calls validateUserOp on each op's sender (a proxy delegates it on) and
      // innerHandleOp once per op, each starting its stage.
      const entryPoints = new Set(bundles.map((b) => b.entryPoint));
      const calledByEntryPoint = (method: string) => frames.filter((f) => f.action.method === method && entryPoints.has(f.action.from));
      const validations = calledByEntryPoint('validateUserOp');
      expect(validations.map((f) => f.action.to)).to.deep.equal(
        bundles.flatMap((b) => b.userOpHashes.map((h) => ops.find((o) => o.userOpHash === h)!.sender)),
      );
      expect(validations.flatMap((f) => [...walk(f)]).every((f) => f.stage === 'validation')).to.equal(true);
      const executions = frames.filter((f) => f.action.method === 'innerHandleOp');
      expect(executions).to.have.length(ops.length);
      for (const execution of executions) {
        expect(execution.stage).to.equal('execution');
        expect([...walk(execution)].every((f) => f.stage === 'execution' || f.stage === 'postOp')).to.equal(true);
      }
      const paymasterValidations = calledByEntryPoint('validatePaymasterUserOp');
      expect(paymasterValidations.map((f) => f.action.to).sort()).to.deep.equal(
        ops
          .filter((o) => o.paymaster)
          .map((o) => o.paymaster!)
          .sort(),
      );
      for (const postOp of frames.filter((f) => f.action.method === 'postOp')) {
        expect(postOp.stage).to.equal('postOp');
        expect(ops.map((o) => o.paymaster)).to.include(postOp.action.to);
      }
    }
  });

  it("getUserOpTraces answers the op's execution frame: the same frames as the transaction's, its account calls as the truth has them", async () => {
    const ops = d.truth.userOps;
    // The devnet's paymasters that return a context, so that the EntryPoint calls their postOp.
    const postOpPaymasters = new Map(['v0.6', 'v0.7', 'v0.8'].map((v) => [v, d.truth.contracts[`postOpPaymaster.${v}`]!.toLowerCase()]));
    const picks = [
      ...['v0.6', 'v0.7', 'v0.8'].map((v) => ops.find((o) => o.entryPointVersion === v && o.calls.length > 1)),
      ...['v0.6', 'v0.7', 'v0.8'].map((v) => ops.find((o) => o.entryPointVersion === v && o.calls.length === 1 && o.paymaster)),
      ...['v0.6', 'v0.7', 'v0.8'].map((v) => ops.find((o) => o.paymaster === postOpPaymasters.get(v))),
      ops.find((o) => !o.success),
    ].filter((o) => o !== undefined);
    expect(picks.length).to.be.at.least(9);
    for (const op of picks) {
      const res = await d.get('getUserOpTraces', { userOpHash: op.userOpHash, network: 'devnet' });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      const body = userOpTracesBody.parse(res.body);
      expect(body).to.include({
        userOpHash: op.userOpHash,
        chainId: d.truth.chainId,
        transactionHash: op.transactionHash,
        traceStatus: 'ok',
        message: null,
      });
      expect(body.relevantTraces).to.have.length(1);
      const root = body.relevantTraces[0]!;
      expect(root).to.deep.include({ stage: 'execution', traceAddress: [] });
      expect(root.action).to.include({ method: 'innerHandleOp', from: op.entryPoint, to: op.entryPoint });
      // The same frames as that innerHandleOp in the whole transaction's trace.
      const tx = trxTracesBody.parse((await d.get('getTrxTraces', { network: 'devnet', trxHash: op.transactionHash })).body).trace[0]!;
      const inTx = [...walk(tx)].find((f) => f.action.method === 'innerHandleOp' && f.action.input === root.action.input)!;
      const strip = (t: Trace): unknown => ({ ...t, traceAddress: undefined, subtraces: t.subtraces.map(strip) });
      expect(strip(root)).to.deep.equal(strip(inTx));
      // The account call: its decoded calls are the truth's.
      const accountCall = root.subtraces.find((f) => f.action.to === op.sender && f.action.input === op.callData.toLowerCase())!;
      expect(accountCall, 'the account frame').to.not.equal(undefined);
      expect(accountCall.traceAddress).to.deep.equal([root.subtraces.indexOf(accountCall)]);
      const decoded = accountCall.action.decodedInput!;
      if (op.calls.length > 1 || accountCall.action.method !== 'execute') {
        expect(decoded.find((x) => x.name === 'calls')!.value).to.deep.equal(op.calls);
      } else {
        expect(decoded.map((x) => x.value)).to.deep.equal([op.calls[0]!.target, op.calls[0]!.value, op.calls[0]!.data]);
      }
      if (op.success) {
        // Under the account's frame (a proxy: its implementation makes the calls).
        const targets = [...walk(accountCall)].map((f) => f.action.to);
        expect(targets).to.include.members(op.calls.map((c) => c.target));
      }
      // postOp frames: the EntryPoint's call to the op's paymaster, only for a paymaster that asked for it.
      const postOpCalls = [...walk(root)].filter((f) => f.stage === 'postOp' && f.action.from === op.entryPoint);
      const expected = op.paymaster !== null && op.paymaster === postOpPaymasters.get(op.entryPointVersion) ? [op.paymaster] : [];
      expect(postOpCalls.map((f) => [f.action.to, f.action.method])).to.deep.equal(expected.map((p) => [p, 'postOp']));
    }
  });

  it('getUserOpTraces decodes the ERC-20 transfer an op makes as the truth records it', async () => {
    const transfer = d.truth.transfers.find(
      (t) => t.standard === 'ERC20' && t.from === d.truth.userOps.find((o) => o.userOpHash === t.userOpHash)!.sender,
    )!;
    const body = userOpTracesBody.parse((await d.get('getUserOpTraces', { userOpHash: transfer.userOpHash, network: 'devnet' })).body);
    const frame = [...walk(body.relevantTraces[0]!)].find((f) => f.action.to === transfer.token && f.action.method === 'transfer')!;
    expect(frame.action.decodedInput).to.deep.equal([
      { name: 'to', type: 'address', value: transfer.to },
      { name: 'value', type: 'uint256', value: transfer.value },
    ]);
  });

  it('traces an op not traced while indexing on its first request and stores it for every op of its transaction; a node without a debug API gets a clear answer', async () => {
    const op = d.truth.userOps.find((o) => o.success && opsOf(o.transactionHash).length > 1)!;
    const txOps = opsOf(op.transactionHash).map((o) => o.userOpHash);
    await d.db.query('delete from user_op_traces where user_op_hash = any($1::bytea[])', [txOps.map((h) => bytea(h))]);
    const stored = async () =>
      (
        await d.db.query<{ user_op_hash: string; status: string }>(
          'select user_op_hash, status from user_op_traces where user_op_hash = any($1::bytea[]) order by user_op_hash',
          [txOps.map((h) => bytea(h))],
        )
      ).rows;
    const query = { userOpHash: op.userOpHash, network: 'devnet' };

    // A node without the debug API: 200, no frames, a message saying why; the metadata stands without its trace.
    const noDebug = await startFaultProxy({ upstream: d.devnet.rpcUrl, faultRate: 0, unsupportedMethods: ['debug_traceTransaction'] });
    proxies.push(noDebug);
    const withoutDebug = await appWithRpc(noDebug.url);
    const unavailable = userOpTracesBody.parse((await withoutDebug('getUserOpTraces', query)).body);
    expect(unavailable).to.include({ traceStatus: 'unavailable', transactionHash: op.transactionHash });
    expect(unavailable.relevantTraces).to.deep.equal([]);
    expect(unavailable.message).to.match(/no debug API/);
    const metadataWithout = await withoutDebug('getUserOpMetadata', query);
    expect(metadataWithout.status).to.equal(200);
    expect(metadataWithout.body.executionTrace).to.equal(null);
    // A node that fails: getUserOpTraces says so (502); nothing is stored either way.
    const dead = await appWithRpc('http://127.0.0.1:9');
    expect((await dead('getUserOpTraces', query)).status).to.equal(502);
    expect(await stored()).to.deep.equal([]);

    // A node that traces: the first request traces and stores; the next ones are answered from the store.
    const proxy = await startFaultProxy({ upstream: d.devnet.rpcUrl, faultRate: 0 });
    proxies.push(proxy);
    const get = await appWithRpc(proxy.url);
    const first = userOpTracesBody.parse((await get('getUserOpTraces', query)).body);
    expect(first).to.include({ traceStatus: 'ok', message: null });
    expect(await stored()).to.deep.equal([...txOps].sort().map((h) => ({ user_op_hash: h, status: 'ok' })));
    const asked = proxy.stats.requests;
    expect(asked).to.be.greaterThan(0);
    const sibling = txOps.find((h) => h !== op.userOpHash)!;
    const metadata = await get('getUserOpMetadata', { userOpHash: sibling, network: 'devnet' });
    expect(metadata.body.executionTrace.traceData).to.include({ executionCall: true, to: op.entryPoint });
    expect(proxy.stats.requests, 'answered from the store').to.equal(asked);
  });

  it("keeps getUserOp's failure open while the node cannot trace: a later request names the failing frame", async () => {
    const failed = d.truth.userOps.find((o) => !o.success)!;
    await d.db.query('delete from user_op_traces where user_op_hash = $1', [bytea(failed.userOpHash)]);
    const proxy = await startFaultProxy({ upstream: d.devnet.rpcUrl, faultRate: 1, faults: ['internalError'] });
    proxies.push(proxy);
    const get = await appWithRpc(proxy.url);
    const query = { hash: failed.userOpHash, network: 'devnet' };
    const untraced = (await get('getUserOp', query)).body.userOps[0];
    expect(untraced.failure).to.include({ stage: 'execution', frame: null });

    // The node heals: once the answer's head TTL (about a devnet block) has passed, the same server
    // traces the op again instead of reusing the answer as final.
    proxy.configure({ faultRate: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const traced = (await get('getUserOp', query)).body.userOps[0];
    expect(traced.failure.frame).to.be.an('object');
    expect(traced.failure.frame.depth).to.be.greaterThan(0);
    const asked = proxy.stats.requests;
    expect((await get('getUserOp', query)).body.userOps[0].failure).to.deep.equal(traced.failure);
    expect(proxy.stats.requests, 'answered from the store').to.equal(asked);
  });

  it('accepts the sender and trxHash the explorer sends, and answers 404 naming the one that does not match', async () => {
    const [op, other] = [
      d.truth.userOps[1]!,
      d.truth.userOps.find((o) => o.transactionHash !== d.truth.userOps[1]!.transactionHash && o.sender !== d.truth.userOps[1]!.sender)!,
    ];
    const ok = await d.get('getUserOpTraces', {
      userOpHash: op.userOpHash,
      network: 'devnet',
      sender: op.sender.toUpperCase().replace('0X', '0x'),
      trxHash: op.transactionHash,
    });
    expect(ok.status).to.equal(200);
    for (const [param, query] of [
      ['trxHash', { trxHash: other.transactionHash }],
      ['sender', { sender: other.sender }],
    ] as const) {
      const res = await d.get('getUserOpTraces', { userOpHash: op.userOpHash, network: 'devnet', ...query });
      expect(res.status).to.equal(404);
      expect(res.body).to.include({ code: 'NOT_FOUND', param });
    }
  });

  it('answers 404 naming the parameter for an unknown op or a transaction not indexed as a bundle', async () => {
    const unknownOp = await d.get('getUserOpTraces', { userOpHash: `0x${'1'.repeat(64)}`, network: 'devnet' });
    expect(unknownOp.status).to.equal(404);
    expect(unknownOp.body).to.include({ code: 'NOT_FOUND', param: 'userOpHash' });
    // A real transaction of the devnet that is not a bundle (the deployer's), and one that does not exist.
    const block1 = await d.devnet.rpc.call<{ transactions: string[] }>('eth_getBlockByNumber', ['0x1', false]);
    for (const trxHash of [block1.transactions[0]!, `0x${'2'.repeat(64)}`]) {
      const res = await d.get('getTrxTraces', { network: 'devnet', trxHash });
      expect(res.status).to.equal(404);
      expect(res.body).to.include({ code: 'NOT_FOUND', param: 'trxHash' });
    }
  });

  it('answers 400 naming the parameter for bad inputs', async () => {
    const hash = d.truth.userOps[0]!.userOpHash;
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['getTrxTraces', { network: 'devnet' }, 'trxHash'],
      ['getTrxTraces', { network: 'devnet', trxHash: '0x1234' }, 'trxHash'],
      ['getTrxTraces', { network: 'nowhere', trxHash: hash }, 'network'],
      ['getUserOpTraces', { network: 'devnet' }, 'userOpHash'],
      ['getUserOpTraces', { network: 'devnet', userOpHash: `0x${'z'.repeat(64)}` }, 'userOpHash'],
      ['getUserOpTraces', { network: 'devnet', userOpHash: hash, sender: '0x12' }, 'sender'],
      ['getUserOpTraces', { network: 'devnet', userOpHash: hash, trxHash: 'abc' }, 'trxHash'],
      ['getUserOpTraces', { network: 'mainnet', userOpHash: hash }, 'network'],
    ];
    for (const [name, query, param] of cases) {
      const res = await d.get(name, query);
      expect(res.status, `${name} ${JSON.stringify(query)}`).to.equal(400);
      expect(res.body).to.include({ code: 'BAD_REQUEST', param });
      expect(res.body.message).to.include(param);
    }
    // Without a network a transaction is looked for on every indexed one: a hash no bundle has is a 404.
    const unknown = await d.get('getTrxTraces', { trxHash: hash });
    expect(unknown.status).to.equal(404);
    expect(unknown.body).to.include({ code: 'NOT_FOUND', param: 'trxHash' });
  });

  it('getTrxTraces answers 502 when every node fails, 503 when the node has no debug API', async () => {
    const txHash = sampleTransactions()[0]!;
    const dead = await appWithRpc('http://127.0.0.1:9');
    const failed = await dead('getTrxTraces', { network: 'devnet', trxHash: txHash });
    expect(failed.status).to.equal(502);
    expect(failed.body).to.include({ code: 'BAD_GATEWAY' });

    const noDebug = await startFaultProxy({ upstream: d.devnet.rpcUrl, faultRate: 0, unsupportedMethods: ['debug_traceTransaction'] });
    proxies.push(noDebug);
    const res = await (await appWithRpc(noDebug.url))('getTrxTraces', { network: 'devnet', trxHash: txHash });
    expect(res.status).to.equal(503);
    expect(res.body.message).to.match(/debug_traceTransaction/);
    // The failover: a dead first URL, a working second one.
    const failover = await (
      await appWithRpc(`http://127.0.0.1:9,${d.devnet.rpcUrl}`)
    )('getTrxTraces', { network: 'devnet', trxHash: txHash });
    expect(failover.status).to.equal(200);
  });

  it("getTrxTraces keeps a final block's trace: the node is asked once", async () => {
    const proxy = await startFaultProxy({ upstream: d.devnet.rpcUrl, faultRate: 0 });
    proxies.push(proxy);
    const get = await appWithRpc(proxy.url);
    const txHash = sampleTransactions()[1]!;
    const first = await get('getTrxTraces', { network: 'devnet', trxHash: txHash });
    const asked = proxy.stats.requests;
    expect(asked).to.be.greaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1300)); // longer than a head answer lives on the devnet
    const second = await get('getTrxTraces', { network: 'devnet', trxHash: txHash });
    expect(second.body).to.deep.equal(first.body);
    expect(proxy.stats.requests).to.equal(asked);
  });
});
