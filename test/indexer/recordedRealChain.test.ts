/**
 * The real indexer on five transactions recorded from public chains (Blockscout's fixtures, found
 * as test/helpers/recordedChain.ts's FIXTURES_DIR says): each is served by a recorded-RPC server
 * (test/helpers/recordedChain.ts) under its real chain id, with the EntryPoint at its canonical
 * address, and indexed into its own database. Every expected value is derived here from the raw
 * recording — the UserOperationEvent and AccountDeployed logs, the handleOps calldata (from the
 * transaction or, for the wrapped bundle, from the callTracer frame) decoded with the
 * @account-abstraction/contracts ABIs, the account calls decoded with hand-written ABIs — and the
 * userOpHash is recomputed from the stored calldata fields.
 */
import { expect } from 'chai';
import { AbiCoder, Interface, Signature, concat, dataLength, dataSlice, verifyAuthorization, type Result } from 'ethers';
import { userOpHash, type EpVersion } from '../../devnet/index.js';
import { entryPointArtifact } from '../../devnet/artifacts.js';
import { startIndexer } from '../../indexer/index.js';
import { hasEip7702InitCode } from '../../indexer/decode/eip7702.js';
import { decoderFor } from '../../indexer/decode/entryPointDecoder.js';
import { userOpHashOf } from '../../indexer/decode/userOpHash.js';
import { indexerEnvSchema, loadConfig } from '../../shared/config.js';
import { bytea, type Db } from '../../shared/db/client.js';
import { opCallsSql } from '../../shared/db/tables/userOpCalls.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { envSuffix, findNetworkByChainId, type EntryPointVersion } from '../../shared/networks.js';
import request from 'supertest';
import { createApp } from '../../server/app.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';
import {
  FIXTURES_DIR,
  fixturesPresent,
  readRecordedTransaction,
  startRecordedChain,
  type CallFrame,
  type RecordedChain,
  type RecordedTransaction,
} from '../helpers/recordedChain.js';
import { quietLogger } from './support.js';
import { CANONICAL_ENTRYPOINTS, TOPICS, ZERO_ADDRESS } from '../../shared/chain/constants.js';

const FIXTURES: ReadonlyArray<{ name: string; version: EntryPointVersion; what: string }> = [
  { name: 'handle_tx_v06_ok', version: 'v0.6', what: 'a v0.6 bundle called directly (mainnet)' },
  {
    name: 'handle_tx_v06_with_tracing_ok',
    version: 'v0.6',
    what: 'a v0.6 bundle sent through a wrapper, calldata only in the trace (mainnet)',
  },
  { name: 'handle_tx_v07_ok', version: 'v0.7', what: 'a v0.7 sponsored swap (mainnet)' },
  { name: 'handle_tx_v08_ok', version: 'v0.8', what: 'a v0.8 account deployment (Sepolia)' },
  { name: 'handle_tx_v09_ok', version: 'v0.9', what: 'a v0.9 EIP-7702 transaction (OP mainnet)' },
];

const abi = AbiCoder.defaultAbiCoder();
const EVENTS = new Interface([
  'event UserOperationEvent(bytes32 indexed userOpHash, address indexed sender, address indexed paymaster, uint256 nonce, bool success, uint256 actualGasCost, uint256 actualGasUsed)',
  'event AccountDeployed(bytes32 indexed userOpHash, address indexed sender, address factory, address paymaster)',
]);
/** v0.9 keeps v0.8's PackedUserOperation and handleOps; the packages stop at v0.8. */
const handleOpsAbi = (version: EntryPointVersion): Interface =>
  new Interface(entryPointArtifact(version === 'v0.6' ? 'v0.6' : version === 'v0.7' ? 'v0.7' : 'v0.8').abi);
/** The account entry points these recordings use, written out by hand. */
const ACCOUNT = new Interface([
  'function execute(address dest, uint256 value, bytes func)',
  'function execute(bytes32 mode, bytes executionCalldata)',
  'function execTransactionFromEntrypoint(address to, uint256 value, bytes data)',
  'function executeBySender((address to, uint256 value, bytes data)[] calls)',
  'function executeWithoutChainIdValidation(bytes[] calls)',
]);

type Call = { target: string; value: bigint; data: string };
const lower = (s: string): string => s.toLowerCase();

function expectedCalls(sender: string, callData: string): Call[] {
  const parsed = ACCOUNT.parseTransaction({ data: callData });
  if (!parsed) return [];
  const a = parsed.args;
  const structs = (list: Result): Call[] =>
    [...list].map((c: Result) => ({ target: lower(c[0] as string), value: c[1] as bigint, data: lower(c[2] as string) }));
  switch (parsed.signature) {
    case 'execute(address,uint256,bytes)':
    case 'execTransactionFromEntrypoint(address,uint256,bytes)':
      return [{ target: lower(a[0] as string), value: a[1] as bigint, data: lower(a[2] as string) }];
    case 'execute(bytes32,bytes)': {
      const mode = (a[0] as string).slice(2, 4);
      if (mode === '01') return structs(abi.decode(['(address,uint256,bytes)[]'], a[1] as string)[0] as Result);
      const packed = a[1] as string;
      return [{ target: lower(dataSlice(packed, 0, 20)), value: BigInt(dataSlice(packed, 20, 52)), data: lower(dataSlice(packed, 52)) }];
    }
    case 'executeBySender((address,uint256,bytes)[])':
      return structs(a[0] as Result);
    case 'executeWithoutChainIdValidation(bytes[])':
      // Coinbase Smart Wallet: every entry is a call of the account to itself.
      return [...(a[0] as Result)].map((data) => ({ target: lower(sender), value: 0n, data: lower(data as string) }));
    default:
      return [];
  }
}

/** The handleOps input: the transaction's own when it calls the EntryPoint, else the trace's frame. */
function handleOpsInput(t: RecordedTransaction, entryPoint: string): string {
  if (t.tx.to && lower(t.tx.to) === entryPoint) return t.tx.input;
  const find = (f: CallFrame): CallFrame | undefined =>
    f.to && lower(f.to) === entryPoint && !f.error ? f : f.calls?.map(find).find(Boolean);
  const frame = t.callTrace ? find(t.callTrace) : undefined;
  if (!frame) throw new Error(`${t.name}: no handleOps call to ${entryPoint}`);
  return frame.input;
}

/**
 * v0.9's reading of paymasterAndData (UserOperationLib): a trailing signature ‖ uint16 length ‖
 * magic is the paymaster's signature, and the userOpHash covers the rest with the magic kept.
 */
const PAYMASTER_SIG_MAGIC = '0x22e325a297439656';
function v09PaymasterSignature(pmd: string): { signature: string | null; hashed: string } {
  const length = dataLength(pmd);
  if (length < 62 || lower(dataSlice(pmd, length - 8)) !== PAYMASTER_SIG_MAGIC) return { signature: null, hashed: pmd };
  const signatureLength = Number(dataSlice(pmd, length - 10, length - 8));
  if (signatureLength === 0) return { signature: null, hashed: pmd };
  const start = length - 10 - signatureLength;
  return { signature: lower(dataSlice(pmd, start, length - 10)), hashed: concat([dataSlice(pmd, 0, start), PAYMASTER_SIG_MAGIC]) };
}

function recomputedHash(row: userOps.UserOpRow, version: EntryPointVersion, chainId: number): string {
  const big = (v: string | null): bigint => BigInt(v!);
  const op = {
    sender: row.sender,
    nonce: big(row.nonce),
    initCode: row.init_code!,
    callData: row.call_data!,
    callGasLimit: big(row.call_gas_limit),
    verificationGasLimit: big(row.verification_gas_limit),
    preVerificationGas: big(row.pre_verification_gas),
    maxFeePerGas: big(row.max_fee_per_gas),
    maxPriorityFeePerGas: big(row.max_priority_fee_per_gas),
    paymasterAndData: version === 'v0.9' ? v09PaymasterSignature(row.paymaster_and_data!).hashed : row.paymaster_and_data!,
    signature: row.signature!,
  };
  const formula: EpVersion = version === 'v0.9' ? 'v0.8' : version;
  return userOpHash(op, formula, row.entry_point, chainId);
}

/** Senders that this transaction's EIP-7702 authorizations delegate (each authority recovered from its signature). */
function authorizedSenders(t: RecordedTransaction): Set<string> {
  const out = new Set<string>();
  for (const a of t.tx.authorizationList ?? []) {
    if (a.address === ZERO_ADDRESS) continue;
    const signature = Signature.from({ r: a.r, s: a.s, yParity: Number(a.yParity) as 0 | 1 });
    out.add(lower(verifyAuthorization({ address: a.address, nonce: BigInt(a.nonce), chainId: BigInt(a.chainId) }, signature)));
  }
  return out;
}

describe('indexer on recorded real-chain transactions', function () {
  this.timeout(120_000);

  before(function () {
    if (!fixturesPresent()) {
      console.log(
        `      skipped: the real-chain fixtures are not at ${FIXTURES_DIR} (set REALCHAIN_FIXTURES_DIR, or keep the handbook folder beside the repository)`,
      );
      this.skip();
    }
  });

  for (const fixture of FIXTURES) {
    const t = useTestDb();
    describe(`${fixture.name}: ${fixture.what}`, fixtureTests(t, fixture));
  }
});

function fixtureTests(t: { readonly db: Db }, fixture: (typeof FIXTURES)[number]) {
  return function () {
    let recording: RecordedTransaction;
    let chain: RecordedChain;
    let chainId: number;
    let entryPoint: string;

    before(async function () {
      if (!fixturesPresent()) this.skip();
      recording = readRecordedTransaction(fixture.name);
      chainId = Number(recording.tx.chainId);
      entryPoint = CANONICAL_ENTRYPOINTS[fixture.version];
      chain = await startRecordedChain({ chainId, transactions: [recording] });
      const network = findNetworkByChainId(chainId);
      if (!network) throw new Error(`chain ${chainId} is not in shared/networks.ts`);
      const suffix = envSuffix(network.name);
      const block = Number(recording.receipt.blockNumber);
      const config = loadConfig(indexerEnvSchema, {
        NETWORKS: network.name,
        [`RPC_URL_${suffix}`]: chain.url,
        [`START_BLOCK_${suffix}`]: String(block - 2),
        INDEXER_POLL_INTERVAL_MS: '1000',
      });
      const indexer = startIndexer({ db: t.db, config, log: quietLogger() });
      try {
        await indexer.syncNow();
      } finally {
        await indexer.stop();
      }
    });

    after(async () => {
      await chain?.stop();
    });

    it('is recorded against the canonical EntryPoint of its version, indexed up to the head', async () => {
      const eventLogs = recording.receipt.logs.filter((l) => l.topics[0] === EVENTS.getEvent('UserOperationEvent')!.topicHash);
      expect(eventLogs.map((l) => lower(l.address))).to.deep.equal([entryPoint]);
      const { rows } = await t.db.query<{ indexed_block: string }>('select indexed_block from indexer_state where chain_id = $1', [
        chainId,
      ]);
      expect(Number(rows[0]!.indexed_block)).to.equal(chain.head);
    });

    it('stores every op exactly as its logs and calldata say', async () => {
      const { rows: stored } = await t.db.query<userOps.UserOpRow & { decode_status: string; input: string | null }>(
        `select u.*, ${userOps.keptByBundle('u')}, (select bt.input from bundle_transactions bt where bt.chain_id = u.chain_id and bt.tx_hash = u.tx_hash) as input
         from user_ops u where u.chain_id = $1 order by u.log_index`,
        [chainId],
      );
      // An op sent straight to the EntryPoint keeps its bytes in the transaction's input only (at op_at).
      const direct = recording.tx.to !== null && lower(recording.tx.to) === entryPoint;
      for (const row of stored) {
        expect(row.op_at !== null, `op_at of ${row.user_op_hash}`).to.equal(direct);
        if (direct) expect([row.call_data, row.signature, row.init_code, row.paymaster_and_data]).to.deep.equal([null, null, null, null]);
      }
      const rows = stored.map(userOps.withInputFields);
      const events = recording.receipt.logs
        .map((l) => ({ log: l, parsed: EVENTS.parseLog(l) }))
        .filter((e) => e.parsed && lower(e.log.address) === entryPoint);
      const opEvents = events.filter((e) => e.parsed!.name === 'UserOperationEvent');
      const factories = new Map(
        events
          .filter((e) => e.parsed!.name === 'AccountDeployed')
          .map((e) => [e.parsed!.args.userOpHash as string, lower(e.parsed!.args.factory as string)]),
      );
      const handleOps = handleOpsAbi(fixture.version).decodeFunctionData('handleOps', handleOpsInput(recording, entryPoint));
      const calldataOps = [...(handleOps[0] as Result)] as Result[];
      expect(rows).to.have.length(opEvents.length);

      opEvents.forEach(({ log, parsed }, i) => {
        const e = parsed!.args;
        const row = rows[i]!;
        const op = calldataOps.find(
          (o) => lower(o.sender as string) === lower(e.sender as string) && (o.nonce as bigint) === (e.nonce as bigint),
        )!;
        const blockNumber = Number(log.blockNumber);
        const paymaster = lower(e.paymaster as string);
        expect(row, fixture.name).to.deep.include({
          user_op_hash: lower(e.userOpHash as string),
          entry_point: entryPoint,
          entry_point_version: fixture.version,
          sender: lower(e.sender as string),
          nonce: String(e.nonce),
          paymaster: paymaster === ZERO_ADDRESS ? null : paymaster,
          factory: factories.get(e.userOpHash as string) ?? null,
          success: e.success as boolean,
          actual_gas_cost: String(e.actualGasCost),
          actual_gas_used: String(e.actualGasUsed),
          beneficiary: lower(handleOps[1] as string),
          bundler: lower(recording.tx.from),
          tx_hash: lower(recording.tx.hash),
          block_number: String(blockNumber),
          block_hash: lower(log.blockHash),
          block_time: String(Number(log.blockTimestamp ?? chain.header(blockNumber).timestamp)),
          log_index: Number(log.logIndex),
          decode_status: 'ok',
          init_code: lower(op.initCode as string),
          call_data: lower(op.callData as string),
          paymaster_and_data: lower(op.paymasterAndData as string),
          signature: lower(op.signature as string),
          paymaster_signature: fixture.version === 'v0.9' ? v09PaymasterSignature(op.paymasterAndData as string).signature : null,
        });
        expect(recomputedHash(row, fixture.version, chainId), 'userOpHash recomputed from the stored calldata fields').to.equal(
          row.user_op_hash,
        );
      });
    });

    it('recomputes each op’s logged userOpHash from its calldata as the indexer does to read bundles without a trace (none for EIP-7702 init code)', () => {
      const call = decoderFor(fixture.version).decodeHandleOps(handleOpsInput(recording, entryPoint))!;
      const logged = recording.receipt.logs.filter((l) => l.topics[0] === TOPICS.userOperationEvent).map((l) => lower(l.topics[1]!));
      expect(call.ops.length).to.equal(logged.length);
      for (const [i, op] of call.ops.entries()) {
        const hash = userOpHashOf(op, fixture.version, entryPoint, chainId);
        if (hasEip7702InitCode(fixture.version, op.initCode)) expect(hash).to.equal(null);
        else expect(hash, `op ${i}`).to.equal(logged[i]);
      }
    });

    it('stores the account calls decoded from each op’s callData (targets, values, data)', async () => {
      const ops = (
        await t.db.query<userOps.UserOpRow & { input: string | null }>(
          `select u.*, ${userOps.keptByBundle('u')}, (select bt.input from bundle_transactions bt where bt.chain_id = u.chain_id and bt.tx_hash = u.tx_hash) as input
           from user_ops u where u.chain_id = $1`,
          [chainId],
        )
      ).rows.map(userOps.withInputFields);
      for (const op of ops) {
        const { rows } = await t.db.query<{ target: string; value: string; data: string }>(
          `select c.target, c.value::text as value, c.data
           from user_ops u cross join lateral ${opCallsSql('u')} c
           where u.chain_id = $1 and u.user_op_hash = $2 order by c.call_index`,
          [chainId, bytea(op.user_op_hash)],
        );
        const want = expectedCalls(op.sender, op.call_data!);
        expect(want.length, 'the recording’s callData decodes with a known account ABI').to.be.greaterThan(0);
        expect(rows.map((r) => ({ target: r.target, value: BigInt(r.value), data: r.data }))).to.deep.equal(want);
      }
    });

    it('stores the bundle: beneficiary, bundler, and the fee the transaction paid (L1 data fee included, and beside it)', async () => {
      const { rows } = await t.db.query<{
        beneficiary: string;
        bundler: string;
        ops_count: number;
        fee: string;
        l1_fee: string | null;
        tx_from: string;
      }>(
        `select b.beneficiary, b.bundler, b.ops_count, bt.fee::text, bt.l1_fee::text, bt.tx_from from bundles b
         join bundle_transactions bt on bt.chain_id = b.chain_id and bt.tx_hash = b.tx_hash where b.chain_id = $1`,
        [chainId],
      );
      const handleOps = handleOpsAbi(fixture.version).decodeFunctionData('handleOps', handleOpsInput(recording, entryPoint));
      const r = recording.receipt;
      const l1Fee = r.l1Fee === undefined ? null : BigInt(r.l1Fee);
      expect(rows).to.deep.equal([
        {
          beneficiary: lower(handleOps[1] as string),
          bundler: lower(recording.tx.from),
          ops_count: (handleOps[0] as Result).length,
          fee: String(BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice) + (l1Fee ?? 0n)),
          l1_fee: l1Fee === null ? null : String(l1Fee),
          tx_from: lower(recording.tx.from),
        },
      ]);
      if (fixture.version === 'v0.9') expect(l1Fee! > 0n, 'the OP receipt carries an L1 data fee').to.equal(true);
    });

    it('flags a sender as an EIP-7702 account exactly when the transaction authorizes it (op, account, API)', async () => {
      const delegated = authorizedSenders(recording);
      const { rows } = await t.db.query<{ user_op_hash: string; sender: string; eip7702: boolean; account_eip7702: boolean }>(
        `select o.user_op_hash, o.sender, o.eip7702, a.eip7702 as account_eip7702 from user_ops o
         join accounts a on a.chain_id = o.chain_id and a.address = o.sender where o.chain_id = $1`,
        [chainId],
      );
      expect(rows.length).to.be.greaterThan(0);
      for (const r of rows) {
        const want = delegated.has(r.sender);
        expect([r.eip7702, r.account_eip7702], r.sender).to.deep.equal([want, want]);
        expect((await userOps.findByHash(t.db, chainId, r.user_op_hash))!.eip7702).to.equal(want);
      }
      if (fixture.version === 'v0.9') expect(delegated.has(rows[0]!.sender), 'the v0.9 recording authorizes its sender').to.equal(true);
    });

    it("answers the recording through the API in both dialects: the bundle's fee with its L1 part, the op's calls as the live API lists them", async () => {
      const network = findNetworkByChainId(chainId)!.name;
      const deps = testDeps(t.db, { NETWORKS: network });
      try {
        const key = await createTestKey(t.db, `real-${fixture.name}`, 1_000_000);
        const app = createApp(deps);
        const get = (path: string, query: Record<string, string>) => request(app).get(path).query(query).set('x-api-key', key);
        const r = recording.receipt;
        const l1Fee = r.l1Fee === undefined ? null : String(BigInt(r.l1Fee));
        const bundle = await get('/v0/getBundleActivity', { bundle: lower(recording.tx.hash), network });
        expect(bundle.status, JSON.stringify(bundle.body)).to.equal(200);
        expect(bundle.body.bundleDetails).to.include({
          transactionFee: String(BigInt(r.gasUsed) * BigInt(r.effectiveGasPrice) + BigInt(l1Fee ?? 0)),
          l1Fee,
          from: lower(recording.tx.from),
          status: '1',
        });
        for (const op of bundle.body.bundleDetails.userOps as Array<{ userOpHash: string; sender: string; preDecodedCallData: string }>) {
          const live = await get('/jiffyscan/v0/getUserOp', { hash: op.userOpHash, network });
          const want = expectedCalls(op.sender, op.preDecodedCallData);
          expect(live.body.userOps[0].target).to.deep.equal(want.map((c) => c.target));
          expect(live.body.userOps[0].value).to.deep.equal(want.map((c) => c.value.toString()));
          expect(live.body.userOps[0].callData).to.deep.equal(want.map((c) => c.data));
        }
      } finally {
        await deps.services.close();
      }
    });

    it('stores the account a deployment created, with its factory', async () => {
      const deployed = recording.receipt.logs.map((l) => EVENTS.parseLog(l)).filter((p) => p?.name === 'AccountDeployed');
      const { rows } = await t.db.query<{ address: string; factory: string }>(
        'select address, factory from accounts where chain_id = $1 and factory is not null',
        [chainId],
      );
      expect(rows).to.deep.equal(
        deployed.map((p) => ({ address: lower(p!.args.sender as string), factory: lower(p!.args.factory as string) })),
      );
      if (fixture.version === 'v0.8') expect(rows).to.have.length(1);
    });

    it('keeps the execution trace of a bundle it had to trace; getUserOpMetadata traces any other op on first request and stores it, or says the node cannot', async () => {
      const traces = async () =>
        (
          await t.db.query<{ status: string; trace: { to: string } | null }>(
            'select status, trace from user_op_traces where chain_id = $1',
            [chainId],
          )
        ).rows;
      // INDEXER_TRACES=needed: only the wrapped bundle was traced while indexing.
      const wrapped = lower(recording.tx.to!) !== entryPoint;
      expect((await traces()).map((r) => r.status)).to.deep.equal(wrapped ? ['ok'] : []);

      const network = findNetworkByChainId(chainId)!;
      const deps = testDeps(t.db, { NETWORKS: network.name, [`RPC_URL_${envSuffix(network.name)}`]: chain.url });
      try {
        const key = await createTestKey(t.db, `trace-${fixture.name}`, 1_000_000);
        const app = createApp(deps);
        const get = (name: string, query: Record<string, string>) => request(app).get(`/v0/${name}`).query(query).set('x-api-key', key);
        const [op] = (await t.db.query<{ user_op_hash: string }>('select user_op_hash from user_ops where chain_id = $1', [chainId])).rows;
        const metadata = await get('getUserOpMetadata', { userOpHash: op!.user_op_hash, network: network.name });
        expect(metadata.status, JSON.stringify(metadata.body)).to.equal(200);
        const opTraces = await get('getUserOpTraces', { userOpHash: op!.user_op_hash, network: network.name });
        if (recording.callTrace) {
          expect(metadata.body.executionTrace.traceData).to.include({ to: entryPoint, executionCall: true });
          const stored = await traces();
          expect(stored.map((r) => r.status)).to.deep.equal(['ok']);
          expect(stored[0]!.trace!.to).to.equal(entryPoint);
          expect(opTraces.body).to.include({ traceStatus: 'ok', message: null });
        } else {
          // The recorded node answers debug_traceTransaction with "method not found", like a node without the debug API.
          expect(metadata.body.executionTrace).to.equal(null);
          expect(opTraces.status).to.equal(200);
          expect(opTraces.body).to.include({ traceStatus: 'unavailable' });
          expect(opTraces.body.message).to.match(/no debug API/);
          expect(await traces()).to.deep.equal([]);
        }
      } finally {
        await deps.services.close();
      }
    });
  };
}

describe('recorded chain (test server)', function () {
  before(function () {
    if (!fixturesPresent()) this.skip();
  });

  it('links synthesised headers to the recorded block, answers batches, and refuses a trace it does not have', async () => {
    const recording = readRecordedTransaction('handle_tx_v08_ok');
    const chain = await startRecordedChain({ chainId: 11155111, transactions: [recording] });
    try {
      const n = Number(recording.receipt.blockNumber);
      const ask = async (body: unknown): Promise<unknown> =>
        (await fetch(chain.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
      const hexN = (x: number): string => `0x${x.toString(16)}`;
      const answers = (await ask(
        [n - 1, n, n + 1].map((b, i) => ({ jsonrpc: '2.0', id: i, method: 'eth_getBlockByNumber', params: [hexN(b), false] })),
      )) as Array<{ result: { hash: string; parentHash: string; transactions: string[]; timestamp: string } }>;
      const [before, block, after] = answers.map((a) => a.result);
      expect(block!.hash).to.equal(recording.receipt.blockHash);
      expect(block!.parentHash).to.equal(before!.hash);
      expect(after!.parentHash).to.equal(block!.hash);
      expect(block!.transactions).to.deep.equal([recording.tx.hash]);
      expect(Number(after!.timestamp)).to.be.greaterThan(Number(block!.timestamp));
      const byHash = (await ask({ jsonrpc: '2.0', id: 1, method: 'eth_getBlockByHash', params: [before!.hash, false] })) as {
        result: { number: string };
      };
      expect(Number(byHash.result.number)).to.equal(n - 1);
      const logs = (await ask({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_getLogs',
        params: [
          {
            fromBlock: hexN(n),
            toBlock: hexN(n),
            address: [CANONICAL_ENTRYPOINTS['v0.8']],
            topics: [EVENTS.getEvent('AccountDeployed')!.topicHash],
          },
        ],
      })) as { result: unknown[] };
      expect(logs.result).to.have.length(1);
      const none = (await ask({
        jsonrpc: '2.0',
        id: 1,
        method: 'eth_getLogs',
        params: [{ fromBlock: hexN(n + 1), toBlock: hexN(chain.head) }],
      })) as { result: unknown[] };
      expect(none.result).to.deep.equal([]);
      const trace = (await ask({
        jsonrpc: '2.0',
        id: 7,
        method: 'debug_traceTransaction',
        params: [recording.tx.hash, { tracer: 'callTracer' }],
      })) as { id: number; error: { code: number } };
      expect(trace).to.deep.include({ id: 7 });
      expect(trace.error.code).to.equal(-32601);
    } finally {
      await chain.stop();
    }
  });
});
