import { expect } from 'chai';
import { Interface, ZeroAddress, ZeroHash } from 'ethers';
import { createTRPCClient, httpLink } from '@trpc/client';
import type { GroundTruth, TruthUserOp } from '../../devnet/index.js';
import type { Endpoint } from '../../server/endpoints/defineEndpoint.js';
import { endpoints, type EndpointName } from '../../server/endpoints/index.js';
import type { Presentation } from '../../server/dialects/dialect.js';
import { accountExecutionTrace, jiffyscanDialect, liveUserOp } from '../../server/dialects/jiffyscan.js';
import { decodeCall } from '../../server/knownCalls.js';
import type { TraceNode, UserOp } from '../../shared/models/index.js';
import type { AppRouter } from '../../server/trpc/router.js';
import { testDeps, useListeningApp } from '../helpers/app.js';
import { expectedUserOp, pick } from './support/expected.js';
import { sampleInputs } from './support/sampleInputs.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ENTRYPOINT_V07 = new Interface([
  'function innerHandleOp(bytes callData, ((address sender, uint256 nonce, uint256 verificationGasLimit, uint256 callGasLimit, uint256 paymasterVerificationGasLimit, uint256 paymasterPostOpGasLimit, uint256 preVerificationGas, address paymaster, uint256 maxFeePerGas, uint256 maxPriorityFeePerGas) mUserOp, bytes32 userOpHash, uint256 prefund, uint256 contextOffset, uint256 preOpGas) opInfo, bytes context)',
]);

const presentations = jiffyscanDialect.presentations as Partial<Record<EndpointName, Presentation>>;
const queries = (Object.entries(endpoints) as Array<[EndpointName, Endpoint]>).filter(([, e]) => e.kind !== 'mutation');
const LIVE_ONLY_KEYS = ['target', 'value', 'callData', 'actualGasPrice', 'timeSeenInAltMempool', 'timeSeenInMainMempool'];

/** The calls the live API lists for an op, from the truth alone (server/dialects/jiffyscan.ts liveCalls). */
function expectedCalls(op: TruthUserOp) {
  if (op.calls.length === 0) return { target: [op.sender], value: ['0'], callData: [op.callData] };
  return { target: op.calls.map((c) => c.target), value: op.calls.map((c) => c.value), callData: op.calls.map((c) => c.data) };
}

/**
 * A live user op: the truth's values (calls as arrays, gas price from cost and gas used, mempool
 * times null) and, for every other key, exactly what /v0 answers for the same op.
 */
function expectLiveUserOp(truth: GroundTruth, live: Json, spec: Json): void {
  const op = truth.userOps.find((o) => o.userOpHash === live.userOpHash);
  expect(op, `op ${live.userOpHash} is in the truth`).to.not.equal(undefined);
  expect(spec.userOpHash).to.equal(live.userOpHash);
  const { target: _t, value: _v, callData: _c, ...truthFields } = expectedUserOp(truth, op!);
  expect(pick(live, truthFields)).to.deep.equal(truthFields);
  expect(pick(live, expectedCalls(op!))).to.deep.equal(expectedCalls(op!));
  expect(live.preDecodedCallData).to.equal(op!.callData);
  expect(live.status).to.equal(op!.success ? 'SUCCESS' : 'FAILED');
  expect(live.actualGasPrice).to.equal((BigInt(op!.actualGasCost) / BigInt(op!.actualGasUsed)).toString());
  expect(live).to.include({ timeSeenInAltMempool: null, timeSeenInMainMempool: null });
  const rest = (o: Json) => Object.fromEntries(Object.entries(o).filter(([k]) => !LIVE_ONLY_KEYS.includes(k) && !k.startsWith('erc')));
  expect(rest(live)).to.deep.equal(rest(spec));
  // /v0 keeps the spec's strings.
  expect(spec.target === null || typeof spec.target === 'string').to.equal(true);
}

function expectLiveUserOps(truth: GroundTruth, live: Json[], spec: Json[]): void {
  expect(live).to.have.length(spec.length);
  live.forEach((item, i) => expectLiveUserOp(truth, item, spec[i]!));
}

/** `detail` as /v0 answers it but for its user ops, which are live ones. */
function expectDetailWithLiveOps(truth: GroundTruth, live: Json, spec: Json): void {
  const { userOps: liveOps, ...liveRest } = live;
  const { userOps: specOps, ...specRest } = spec;
  expect(liveRest).to.deep.equal(specRest);
  expectLiveUserOps(truth, liveOps, specOps);
}

/** The indexed logs' decoded arguments, as the truth's token transfers say they must be. */
function expectDecodedTransferLog(truth: GroundTruth, log: Json): boolean {
  const transfer = truth.transfers.find((t) => t.transactionHash === log.transactionHash && t.logIndex === Number(log.logIndex));
  if (!transfer || (transfer.standard !== 'ERC20' && transfer.standard !== 'ERC721')) return false;
  expect(log.topicsDecoded).to.include({ from: transfer.from, to: transfer.to });
  if (transfer.standard === 'ERC20') expect(log.dataDecoded).to.deep.equal({ value: transfer.value });
  else expect(log.topicsDecoded.tokenId).to.equal(transfer.tokenId);
  return true;
}

/** An innerHandleOp call (v0.7 layout) for an op of `sender`: what the EntryPoint's execution frame is called with. */
function innerHandleOpInput(sender: string): string {
  const memoryOp = [sender, 0n, 0n, 0n, 0n, 0n, 0n, ZeroAddress, 0n, 0n];
  return ENTRYPOINT_V07.encodeFunctionData('innerHandleOp', ['0x', [memoryOp, ZeroHash, 0n, 0n, 0n], '0x']);
}

/** A trace node without what the live dialect adds (the method and decoded input), recursively. */
function withoutNames(node: Json): Json {
  const { method: _m, decodedInput: _d, ...traceData } = node.traceData;
  return { traceData, next: (node.next as Json[]).map(withoutNames) };
}

/** A call frame as [to, value (decimal), input]. */
const asCall = (node: Json) => [node.traceData.to, BigInt(node.traceData.value ?? '0x0').toString(), node.traceData.input];

/**
 * The live execution trace of an op: rooted at the EntryPoint's call into the account (as /v0 has
 * that frame, marked the execution call), each node named when its selector is known, and every
 * call under the root one the account made, kept with its subtree as traced.
 */
function expectAccountRootedTrace(live: Json, accountCall: Json, sender: string): void {
  expect(withoutNames(live).traceData).to.deep.equal({ ...accountCall.traceData, executionCall: true });
  expect(live.traceData.method, 'the account call is named').to.be.a('string');
  const frames: Json[] = [];
  const collect = (node: Json) => {
    frames.push(node);
    node.next.forEach(collect);
  };
  collect(accountCall);
  for (const call of live.next as Json[]) {
    expect(call.traceData.from, 'a call the account made').to.equal(sender);
    expect(['CALL', 'STATICCALL', 'CREATE', 'CREATE2']).to.include(call.traceData.type);
    const raw = frames.find((f) => JSON.stringify(f.traceData) === JSON.stringify(withoutNames(call).traceData));
    expect(raw, 'a frame of the trace').to.not.equal(undefined);
    expect(withoutNames(call)).to.deep.equal(raw);
  }
}

/** searchEntry's types as the explorer routes them (its constructRedirectUrl), from /v0's. */
const EXPLORER_SEARCH_TYPE: Record<string, string> = { paymaster: 'paymasters', bundler: 'beneficiarie' };
const explorerType = (type: string) => EXPLORER_SEARCH_TYPE[type] ?? type;

/**
 * Where the explorer's search box goes with a searchEntry body (its constructRedirectUrl, plus the
 * factory page it has), or what it says: a body with `message` is "No results found", a non-200 is
 * "Invalid search term".
 */
function explorerSearch(status: number, body: Json): string {
  if (status !== 200) return 'Invalid search term ?';
  const routes: Record<string, string> = {
    userOpHash: 'userOpHash',
    account: 'account',
    paymasters: 'paymaster',
    beneficiarie: 'bundler',
    block: 'block',
    bundle: 'bundle',
    tx: 'bundle',
    factory: 'factory',
  };
  const route = routes[body.type as string];
  if (body.message !== undefined || !body.foundInNetwork || !route) return 'No results found';
  return `/${route}/${body.term}/?network=${body.foundInNetwork}`;
}

/** Per reshaped endpoint: the live body against the /v0 body of the same request and the truth. */
const LIVE_SHAPES: Partial<Record<EndpointName, (truth: GroundTruth, live: Json, spec: Json) => void>> = {
  getUserOp(truth, live, spec) {
    expectLiveUserOps(truth, live.userOps, spec.userOps);
    for (const op of live.userOps) {
      const made = truth.transfers.filter((t) => t.userOpHash === op.userOpHash);
      expect(op.erc20Transfers.map((t: Json) => [t.contractAddress, t.from, t.to, t.value])).to.deep.equal(
        made.filter((t) => t.standard === 'ERC20').map((t) => [t.token, t.from, t.to, t.value]),
      );
      expect(op.erc721Transfers.map((t: Json) => [t.contractAddress, t.from, t.to, t.tokenId])).to.deep.equal(
        made.filter((t) => t.standard === 'ERC721' || t.standard === 'ERC1155').map((t) => [t.token, t.from, t.to, t.tokenId]),
      );
    }
  },
  getLatestUserOps: (truth, live, spec) => expectLiveUserOps(truth, live.userOps, spec.userOps),
  getAddressActivity: (truth, live, spec) => expectDetailWithLiveOps(truth, live.accountDetail, spec.accountDetail),
  getPaymasterActivity: (truth, live, spec) => expectDetailWithLiveOps(truth, live.paymasterDetail, spec.paymasterDetail),
  getBundleActivity: (truth, live, spec) => expectDetailWithLiveOps(truth, live.bundleDetails, spec.bundleDetails),
  getBlockActivity: (truth, live, spec) => expectDetailWithLiveOps(truth, live.block, spec.block),
  getBundlerActivity(truth, live, spec) {
    expectLiveUserOps(truth, live.userOps, spec.userOps);
    const { userOps: liveRows, ...liveRest } = live.bundlerDetails;
    const { userOps: specRows, ...specRest } = spec.bundlerDetails;
    expect(liveRest).to.deep.equal(specRest);
    expect(liveRows).to.have.length(specRows.length);
    liveRows.forEach((row: Json, i: number) => {
      expect(Object.keys(row).sort()).to.deep.equal(Object.keys(specRows[i]).sort());
      expect(pick(row, expectedCalls(truth.userOps.find((o) => o.userOpHash === row.userOpHash)!))).to.deep.equal(
        pick(live.userOps[i], { target: 0, value: 0, callData: 0 }),
      );
    });
  },
  getAddressAggregateData(truth, live, spec) {
    expect(Object.keys(live)).to.deep.equal(['accountDetail']);
    expectDetailWithLiveOps(truth, live.accountDetail, spec);
  },
  getAddressTransactions: (_truth, live, spec) => expect(live).to.deep.equal({ transactions: spec }),
  getAddressERC20Transfers: (_truth, live, spec) => expect(live).to.deep.equal({ erc20Transfers: spec }),
  getAddressNFTTransfers: (_truth, live, spec) => expect(live).to.deep.equal({ erc721Transfers: spec }),
  getAddressBalances(_truth, live, spec) {
    expect(Object.keys(live)).to.deep.equal(['tokenBalances']);
    expect(live.tokenBalances).to.have.length(spec.length);
    live.tokenBalances.forEach((balance: Json, i: number) => {
      const { quote_rate, native_token, ...rest } = spec[i];
      expect(balance).to.deep.equal({
        ...rest,
        quote_rate: quote_rate === null ? null : Number(quote_rate),
        native_token: native_token === 'true',
      });
    });
    expect(live.tokenBalances[0].native_token).to.equal(true);
  },
  getDailyMetrics: (_truth, live, spec) => expect(live).to.deep.equal({ metrics: spec.metrics, matrics: spec.metrics }),
  getUserOpMetadata(truth, live, spec) {
    const { executionTrace: liveTrace, ...liveRest } = live;
    const { executionTrace: specTrace, ...specRest } = spec;
    expect(liveRest).to.deep.equal(specRest);
    const op = truth.userOps.find((o) => o.sender === spec.userOpParams[0] && o.callData === spec.userOpParams[3])!;
    expect(op, 'the op of the metadata').to.not.equal(undefined);
    // /v0 keeps the frames as traced: the EntryPoint's innerHandleOp, and under it its call into the account.
    expect(decodeCall(specTrace.traceData.input)?.method).to.equal('innerHandleOp');
    const accountCall = (specTrace.next as Json[]).find((n) => n.traceData.to === op.sender && n.traceData.input === op.callData)!;
    expect(accountCall, 'a frame calls the sender with the op callData').to.not.equal(undefined);
    expectAccountRootedTrace(liveTrace, accountCall, op.sender);
    if (op.success) expect(liveTrace.next.map(asCall)).to.deep.equal(op.calls.map((c) => [c.target, c.value, c.data]));
  },
  getUserOpLogs(truth, live, spec) {
    expect(live.logs).to.have.length(spec.logs.length);
    live.logs.forEach((log: Json, i: number) => {
      const { topicsDecoded, dataDecoded, ...rest } = log;
      expect(rest).to.deep.equal(spec.logs[i]);
      if (log.event_name === null) expect({ topicsDecoded, dataDecoded }).to.deep.equal({ topicsDecoded: null, dataDecoded: null });
    });
    expect(live.logs.filter((log: Json) => expectDecodedTransferLog(truth, log)).length).to.be.greaterThan(0);
  },
  searchEntry(_truth, live, spec) {
    expect(live).to.deep.equal({
      ...spec,
      type: explorerType(spec.type),
      matches: spec.matches.map((m: Json) => ({ ...m, type: explorerType(m.type) })),
    });
  },
  getLogFromIndex(truth, live, spec) {
    const { topicsDecoded: _t, dataDecoded: _d, ...rest } = live.log;
    expect(rest).to.deep.equal(spec.log);
    expect(expectDecodedTransferLog(truth, live.log)).to.equal(true);
  },
};

describe('JiffyScan dialect (/jiffyscan/v0)', () => {
  const d = useIndexedDevnet({ ops: 150 });
  const live = (name: string, query: Record<string, string>) => d.api().get(`/jiffyscan/v0/${name}`).query(query).set('x-api-key', d.key);

  it('reshapes exactly the endpoints whose live shape differs, and has a check for each', () => {
    expect(Object.keys(presentations).sort()).to.deep.equal(Object.keys(LIVE_SHAPES).sort());
  });

  for (const [name, endpoint] of queries) {
    it(`${name}: answers the live shape, with the truth's values; /v0 unchanged`, async () => {
      const query = sampleInputs(d.truth)[name];
      expect(query, `a sample input for ${name}`).to.not.equal(undefined);
      // The spec answer first, so that a live answer served from the spec's cache entry would show.
      const spec = await d.get(name, query);
      const first = await live(name, query!);
      const again = await live(name, query!);
      expect(first.status, JSON.stringify(first.body)).to.equal(spec.status);
      expect(again.body).to.deep.equal(first.body);
      if (spec.status !== 200) {
        expect(first.body).to.deep.equal(spec.body);
        return;
      }
      endpoint.output.parse(spec.body);
      const presentation = presentations[name];
      if (!presentation) {
        expect(first.body).to.deep.equal(spec.body);
        return;
      }
      presentation.output.parse(first.body);
      LIVE_SHAPES[name]!(d.truth, first.body, spec.body);
    });
  }

  it('answers user ops in the live shape on every endpoint that lists them, for every op of the truth', async () => {
    const res = await live('getLatestUserOps', { network: 'devnet', first: '100', skip: '0' });
    const spec = await d.get('getLatestUserOps', { network: 'devnet', first: '100', skip: '0' });
    expectLiveUserOps(d.truth, res.body.userOps, spec.body.userOps);
    const batch = d.truth.userOps.find((o) => o.calls.length > 1);
    expect(batch, 'the devnet generates executeBatch ops').to.not.equal(undefined);
    const one = await live('getUserOp', { hash: batch!.userOpHash });
    expect(one.body.userOps[0].target).to.deep.equal(batch!.calls.map((c) => c.target));
    // getUserOp items list the op's token transfers: one op of each standard.
    for (const standard of ['ERC20', 'ERC721', 'ERC1155'] as const) {
      const transfer = d.truth.transfers.find((t) => t.standard === standard)!;
      const query = { hash: transfer.userOpHash };
      const [liveRes, specRes] = await Promise.all([live('getUserOp', query), d.get('getUserOp', query)]);
      LIVE_SHAPES.getUserOp!(d.truth, liveRes.body, specRes.body);
      const item = liveRes.body.userOps[0];
      expect(item[standard === 'ERC20' ? 'erc20Transfers' : 'erc721Transfers'], standard).to.have.length.greaterThan(0);
    }
  });

  it('lists an op whose callData is no account call as the sender called with it, and an undecoded one with no calls', () => {
    const op = {
      sender: '0x' + '1'.repeat(40),
      targets: [],
      values: [],
      callDatas: [],
      preDecodedCallData: '0xdeadbeef',
      signature: '0x',
    } as unknown as UserOp;
    const base = { actualGasCost: '100', actualGasUsed: '10' };
    expect(pick(liveUserOp({ ...op, ...base }), { target: 0, value: 0, callData: 0, actualGasPrice: 0 })).to.deep.equal({
      target: [op.sender],
      value: ['0'],
      callData: ['0xdeadbeef'],
      actualGasPrice: '10',
    });
    expect(
      pick(liveUserOp({ ...op, ...base, signature: null, actualGasUsed: '0' }), { target: 0, value: 0, callData: 0, actualGasPrice: 0 }),
    ).to.deep.equal({
      target: [],
      value: [],
      callData: [],
      actualGasPrice: null,
    });
  });

  it('reads as the explorer web app and the SDK read it', async () => {
    const op = d.truth.userOps.find((o) => o.paymaster && o.success)!;
    const transfer = d.truth.transfers.find((t) => t.standard === 'ERC20')!;
    const page = { network: 'devnet', first: '5', skip: '0' };
    const body = async (name: string, query: Record<string, string>) => {
      const res = await live(name, query);
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).to.equal(200);
      return res.body as Json;
    };
    // Home: the widgets render each row's targets and the bundles' count.
    (await body('getLatestUserOps', page)).userOps.forEach((o: Json) => o.target.map((t: string) => t.slice(0, 10)));
    (await body('getLatestBundles', page)).bundles.forEach((b: Json) => Number(b.userOpsLength));
    expect((await body('getTopBundlers', page)).bundlers[0]).to.include.keys('address', 'bundleLength', 'actualGasCostSum');
    // The user-op page: `status` present means mined; value items parse as numbers.
    const item = (await body('getUserOp', { hash: op.userOpHash })).userOps[0];
    expect(item).to.have.property('status');
    item.value.map((v: string) => BigInt(v));
    item.callData.map((c: string) => c.slice(0, 10));
    // The account page: five calls, each read through its envelope.
    const account = { address: transfer.from, ...page };
    (await body('getAddressActivity', account)).accountDetail.userOps.forEach((o: Json) => o.target.map(String));
    (await body('getAddressTransactions', account)).transactions.slice(0, 10).forEach((tx: Json) => Date.parse(tx.block_signed_at));
    expect(
      (await body('getAddressERC20Transfers', account)).erc20Transfers.slice(0, 10).map((t: Json) => parseInt(t.rawContract.value)),
    ).to.have.length.greaterThan(0);
    expect((await body('getAddressNFTTransfers', account)).erc721Transfers.slice(0, 10)).to.be.an('array');
    (await body('getAddressBalances', account)).tokenBalances.forEach((b: Json) => b.contract_name);
    // Bundle, block, paymaster and bundler pages.
    expect((await body('getBundleActivity', { bundle: op.transactionHash, ...page })).bundleDetails.status).to.equal('1');
    (await body('getBlockActivity', { blockNumber: String(op.blockNumber), ...page })).block.userOps.forEach((o: Json) =>
      o.target.map(String),
    );
    (await body('getPaymasterActivity', { address: op.paymaster!, ...page })).paymasterDetail.userOps.forEach((o: Json) =>
      o.target.map(String),
    );
    (await body('getBundlerActivity', { address: op.bundler, ...page })).bundlerDetails.userOps.forEach((o: Json) => o.target.map(String));
    // The SDK's spelling of the metrics envelope, and its aggregate-data envelope.
    expect((await body('getDailyMetrics', { network: 'devnet' })).matrics[0]).to.include.keys('userOpsTotal', 'daySinceEpoch');
    expect((await body('getAddressAggregateData', { address: transfer.from, network: 'devnet' })).accountDetail).to.have.keys(
      'userOps',
      'transactions',
      'erc20Transfers',
      'erc721Transfers',
    );
    // Logs: decoded topics as an object the explorer walks with Object.entries.
    const logs = (await body('getUserOpLogs', { userOpHash: transfer.userOpHash, network: 'devnet' })).logs as Json[];
    expect(logs.some((log) => log.topicsDecoded && Object.entries(log.topicsDecoded).length === 2)).to.equal(true);
  });

  it("getUserOpMetadata: every op's trace is rooted at its account, its next the op's calls; /v0 keeps the frames", async () => {
    for (const op of d.truth.userOps.filter((o) => o.callData !== '0x').slice(0, 40)) {
      const query = { userOpHash: op.userOpHash };
      const [liveRes, specRes] = await Promise.all([live('getUserOpMetadata', query), d.get('getUserOpMetadata', query)]);
      const trace = liveRes.body.executionTrace as Json;
      expect(trace.traceData.to, op.userOpHash).to.equal(op.sender);
      if (op.success) expect(trace.next.map(asCall), op.userOpHash).to.deep.equal(op.calls.map((c) => [c.target, c.value, c.data]));
      const raw = (specRes.body.executionTrace.next as Json[]).find((n) => n.traceData.to === op.sender)!;
      expectAccountRootedTrace(trace, raw, op.sender);
    }
  });

  it("folds an account's own machinery away: proxies, Safe's 4337 module and MultiSend, self-calls; keeps targets' subtrees", () => {
    const address = (c: string) => `0x${c.repeat(40)}`;
    const [ep, sender, singleton, module] = [address('e'), address('a'), address('b'), address('c')];
    const [multiSend, token, other] = [address('d'), address('1'), address('2')];
    /** A frame `[from, to, input, type]` and the frames under it. */
    const frame = ([from, to, input, type = 'CALL']: string[], ...next: TraceNode[]): TraceNode => ({
      traceData: { from: from!, to: to!, input: input!, type, gas: '0x1', gasUsed: '0x1', output: '0x' },
      next,
    });
    const execute = '0x541d63c8' + '00'.repeat(8);
    // The token calls the account back: that stays under the token's frame.
    const transfer = frame([sender, token, '0xa9059cbb01'], frame([token, sender, '0x150b7a02']));
    // Same selector as the account call but no call back: a target.
    const lookalike = frame([sender, other, execute]);
    const batch = frame([sender, multiSend, '0x8d80ff0a', 'DELEGATECALL'], transfer, lookalike, frame([sender, sender, '0x01']));
    const moduleExecutes = frame([module, sender, '0x5229073f'], frame([sender, singleton, '0x5229073f', 'DELEGATECALL'], batch));
    const fallback = frame([sender, module, execute + 'aa'.repeat(20)], moduleExecutes);
    const safe = frame([ep, sender, execute], frame([sender, singleton, execute, 'DELEGATECALL'], fallback));
    const execution = frame([ep, ep, innerHandleOpInput(sender)], safe, frame([ep, other, '0x7c627b21']));
    const folded = accountExecutionTrace(execution);
    expect(folded.traceData).to.deep.equal({ ...safe.traceData, executionCall: true });
    expect(folded.next).to.deep.equal([transfer, lookalike]);
    // No call into the account (empty callData): the EntryPoint's frame as it is.
    const idle = frame([ep, ep, innerHandleOpInput(sender)], frame([ep, other, '0x7c627b21']));
    expect(accountExecutionTrace(idle)).to.equal(idle);
  });

  it("searchEntry: the explorer's search box finds an op, a bundle, an account, a paymaster, a bundler, a factory and a block", async () => {
    const op = d.truth.userOps.find((o) => o.paymaster)!;
    const account = d.truth.accounts[0]!;
    const cases: Array<[string, string]> = [
      [op.userOpHash, 'userOpHash'],
      [op.transactionHash, 'bundle'],
      [op.sender, 'account'],
      [op.paymaster!, 'paymaster'],
      [op.bundler, 'bundler'],
      [account.factory, 'factory'],
      [String(op.blockNumber), 'block'],
    ];
    for (const [entry, page] of cases) {
      // As the explorer calls it: the term lower-cased, no key; with its network selector set or not.
      for (const network of [undefined, 'devnet']) {
        const res = await d
          .api()
          .get('/jiffyscan/v0/searchEntry')
          .query({ entry: entry.toLowerCase(), ...(network ? { network } : {}) });
        expect(explorerSearch(res.status, res.body), `${page} ${entry}`).to.equal(`/${page}/${entry}/?network=devnet`);
      }
    }
    // A term nothing matches: 200 with a message ("No results"); /v0 keeps the spec's 404.
    for (const entry of [`0x${'5'.repeat(40)}`, `0x${'5'.repeat(64)}`, '999999999']) {
      const res = await d.api().get('/jiffyscan/v0/searchEntry').query({ entry, network: 'devnet' });
      expect(res.status, entry).to.equal(200);
      expect(res.body).to.have.keys('message');
      expect(res.body.message).to.include(entry);
      expect(explorerSearch(res.status, res.body)).to.equal('No results found');
      expect((await d.api().get('/v0/searchEntry').query({ entry })).status).to.equal(404);
    }
    // A bad term is still a 400 ("Invalid search term").
    expect((await d.api().get('/jiffyscan/v0/searchEntry').query({ entry: 'nope' })).status).to.equal(400);
  });

  it('answers errors as /v0 does: JSON with the parameter named', async () => {
    const res = await live('getLatestUserOps', { network: 'devnet', first: 'NaN' });
    expect(res.status).to.equal(400);
    expect(res.body).to.include({ code: 'BAD_REQUEST', param: 'first' });
    const noKey = await d.api().get('/jiffyscan/v0/getLatestUserOps').query({ network: 'devnet' });
    expect(noKey.status).to.equal(401);
    expect(noKey.body).to.have.property('message');
  });

  it("publishes an OpenAPI document in its own shapes beside the spec's", async () => {
    const [own, spec] = await Promise.all([d.api().get('/jiffyscan/v0/openapi.json'), d.api().get('/v0/openapi.json')]);
    expect(own.status).to.equal(200);
    expect(own.body.servers).to.deep.equal([{ url: '/jiffyscan/v0' }]);
    const ownOp = own.body.components.schemas.JiffyscanUserOp;
    expect(ownOp.properties.target.type).to.equal('array');
    expect(own.body.components.schemas.UserOp).to.equal(undefined);
    expect(spec.body.components.schemas.UserOp.properties.target.type).to.not.equal('array');
    const transactions = own.body.paths['/getAddressTransactions'].get.responses['200'].content['application/json'].schema;
    expect(transactions.type).to.equal('object');
    expect(transactions.properties).to.have.key('transactions');
    // `network` is optional on every endpoint of both documents, and each says what its absence means.
    for (const doc of [own.body, spec.body]) {
      for (const [path, item] of Object.entries(doc.paths as Record<string, Json>)) {
        const network = (item.get?.parameters ?? []).find((p: Json) => p.name === 'network');
        if (!network) continue;
        expect(network.required, path).to.equal(false);
        expect(network.description, path).to.match(/Optional|every indexed network/);
      }
    }
    const docs = await d.api().get('/jiffyscan/docs/');
    expect(docs.status).to.equal(200);
    expect(docs.text).to.contain('JiffyScan dialect');
  });

  describe('without `network` (the SDK makes it optional on every method)', () => {
    const ON_EVERY_NETWORK = ['getUserOp', 'searchEntry', 'getTopFactories', 'getAddressAggregateData', 'getStatusSummary'];

    it('answers every endpoint in both dialects as for the only indexed network', async () => {
      for (const [name] of queries) {
        const { network, ...without } = sampleInputs(d.truth)[name]!;
        if (network === undefined) continue;
        for (const base of ['/v0', '/jiffyscan/v0']) {
          const named = await d
            .api()
            .get(`${base}/${name}`)
            .query({ ...without, network })
            .set('x-api-key', d.key);
          const unnamed = await d.api().get(`${base}/${name}`).query(without).set('x-api-key', d.key);
          expect(unnamed.status, `${base}/${name}: ${JSON.stringify(unnamed.body)}`).to.equal(named.status);
          expect(unnamed.body, `${base}/${name}`).to.deep.equal(named.body);
        }
      }
    });

    describe('with several networks', () => {
      const deps = (env: Record<string, string> = {}) =>
        testDeps(d.db, { NETWORKS: 'devnet,devnet2', RPC_URL_DEVNET: d.devnet.rpcUrl, RATE_LIMIT_PER_SECOND: '1000000', ...env });
      const noDefault = useListeningApp(() => deps());
      const devnet2Default = useListeningApp(() => deps({ DEFAULT_NETWORK: 'devnet2' }));
      const call = (origin: string, path: string, query: Record<string, string>) =>
        fetch(`${origin}${path}?${new URLSearchParams(query).toString()}`, { headers: { 'x-api-key': d.key } }).then(async (res) => ({
          status: res.status,
          body: (await res.json()) as Json,
        }));

      it('finds a hash on whichever network holds it, and asks for the network of anything else', async () => {
        const samples = sampleInputs(d.truth);
        for (const [name] of queries) {
          const { network, ...without } = samples[name]!;
          if (network === undefined || ON_EVERY_NETWORK.includes(name)) continue;
          const byHash = ['userOpHash', 'bundle', 'transactionHash', 'trxHash'].some((k) => k in without);
          for (const base of ['/v0', '/jiffyscan/v0']) {
            const [named, unnamed] = await Promise.all([
              call(noDefault.origin, `${base}/${name}`, { ...without, network }),
              call(noDefault.origin, `${base}/${name}`, without),
            ]);
            if (byHash) {
              expect(unnamed, `${base}/${name}`).to.deep.equal(named);
              expect(unnamed.status, `${base}/${name}`).to.equal(200);
            } else {
              expect(unnamed.status, `${base}/${name}`).to.equal(400);
              expect(unnamed.body, `${base}/${name}`).to.include({ code: 'BAD_REQUEST', param: 'network' });
              expect(unnamed.body.validNetworks).to.deep.equal(['devnet', 'devnet2']);
              expect(unnamed.body.message).to.include('DEFAULT_NETWORK').and.include('devnet, devnet2');
            }
          }
        }
        // A hash no network holds: the usual not-found answers.
        const unknown = `0x${'ab'.repeat(32)}`;
        expect((await call(noDefault.origin, '/v0/getUserOpMetadata', { userOpHash: unknown })).status).to.equal(404);
        expect((await call(noDefault.origin, '/jiffyscan/v0/getUserOpLogs', { userOpHash: unknown })).body.message).to.include(
          'any indexed network',
        );
      });

      it('answers for DEFAULT_NETWORK when it is set', async () => {
        const latest = await call(devnet2Default.origin, '/v0/getLatestUserOps', { first: '5' });
        expect(latest).to.deep.equal({ status: 200, body: { userOps: [] } });
        const op = d.truth.userOps[0]!;
        const activity = await call(devnet2Default.origin, '/jiffyscan/v0/getAddressActivity', { address: op.sender });
        expect(activity.body.accountDetail).to.include({ network: 'devnet2', userOpsCount: '0' });
        // Hashes are still found where they are.
        const metadata = await call(devnet2Default.origin, '/jiffyscan/v0/getUserOpMetadata', { userOpHash: op.userOpHash });
        expect(metadata.status).to.equal(200);
      });
    });
  });

  describe('over tRPC (jiffyscan.*)', () => {
    const listening = useListeningApp(() => d.deps);

    it("answers every query endpoint as the dialect's REST route does", async () => {
      const client = createTRPCClient<AppRouter>({
        links: [httpLink({ url: `${listening.origin}/trpc`, headers: { 'x-api-key': d.key } })],
      });
      const router = client.jiffyscan as unknown as Record<string, { query(input: unknown): Promise<unknown> }>;
      for (const [name] of queries) {
        if (name === 'getWebhookDeliveries') continue; // a 404 by design (sampleInputs)
        const query = sampleInputs(d.truth)[name]!;
        const rest = await live(name, query);
        const answer = router[name]!.query(query).then(
          (value) => ({ status: 200, body: value }),
          (error: { data?: { httpStatus: number; code: string } }) => ({ status: error.data?.httpStatus, body: error.data?.code }),
        );
        expect(await answer, name).to.deep.equal({ status: rest.status, body: rest.status === 200 ? rest.body : rest.body.code });
      }
      // Typed: the live envelope is what the client's types say.
      const typed = await client.jiffyscan.getAddressTransactions.query({ address: d.truth.userOps[0]!.sender, network: 'devnet' });
      expect(typed.transactions).to.be.an('array');
    });
  });
});
