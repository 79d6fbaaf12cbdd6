/**
 * Why an op failed: revert data encoded by viem (the reference encoder) from the ABIs opscan ships,
 * decoded by opscan's known errors, wrappers unwrapped; and the failing call found in real callTracer
 * traces of the devnet's Reverter, read from anvil.
 */
import { expect } from 'chai';
import { createRequire } from 'node:module';
import { type Abi, encodeAbiParameters, encodeErrorResult, encodeFunctionData, parseAbi, type Hex } from 'viem';
import { startChain, type Chain } from '../../devnet/chain.js';
import { fixtureArtifact } from '../../devnet/artifacts.js';
import type { CallFrame } from '../../shared/db/tables/userOpTraces.js';
import { decodeRevert, knownErrorSignatures } from '../../server/knownErrors.js';
import { diagnoseFailure, failingFrame, failureInWords } from '../../server/opFailure.js';

const require = createRequire(import.meta.url);
/** v0.8 BaseAccount's ExecuteError(uint256 index, bytes error), from the EntryPoint package's artifact. */
const EXECUTE_ERROR = (require('ep08/artifacts/BaseAccount.json') as { abi: Abi }).abi.filter((i) => i.type === 'error');
const ERRORS = [
  ...EXECUTE_ERROR,
  ...parseAbi([
    'error Error(string reason)',
    'error Panic(uint256 code)',
    'error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
    'error PostOpReverted(bytes returnData)',
    'error FailedOpWithRevert(uint256 opIndex, string reason, bytes inner)',
    'error TransferFromFailed()',
    'error Refused(uint256 code)',
  ]),
];
const SENDER = '0x00000000000000000000000000000000000000aa';
const encode = (errorName: string, args: readonly unknown[]): Hex => encodeErrorResult({ abi: ERRORS, errorName, args });

describe('knownErrors.decodeRevert', () => {
  it('names Error(string), every Panic code and a custom error with its arguments', () => {
    expect(decodeRevert(encode('Error', ['no luck']))).to.deep.include({ kind: 'Error', name: 'Error', message: 'no luck' });
    const panics: Array<[bigint, string]> = [
      [0x01n, 'assert'],
      [0x11n, 'arithmetic overflow'],
      [0x12n, 'division by zero'],
      [0x32n, 'array index out of bounds'],
    ];
    for (const [code, words] of panics) {
      expect(decodeRevert(encode('Panic', [code])), String(code)).to.deep.include({
        kind: 'Panic',
        name: 'Panic',
        message: words,
        args: [{ name: 'code', type: 'uint256', value: code.toString() }],
      });
    }
    const custom = decodeRevert(encode('ERC20InsufficientBalance', [SENDER, 3n, 10n]));
    expect(custom).to.deep.include({ kind: 'custom', name: 'ERC20InsufficientBalance', selector: '0xe450d38c', wrappers: [] });
    expect(custom.args).to.deep.equal([
      { name: 'sender', type: 'address', value: SENDER },
      { name: 'balance', type: 'uint256', value: '3' },
      { name: 'needed', type: 'uint256', value: '10' },
    ]);
  });

  it('unwraps v0.8 ExecuteError, PostOpReverted, FailedOpWithRevert and an Error(string) carrying revert data', () => {
    const inner = encode('Panic', [0x11n]);
    const batch = decodeRevert(encode('ExecuteError', [1n, inner]));
    expect(batch).to.deep.include({ kind: 'Panic', message: 'arithmetic overflow', data: inner });
    expect(batch.wrappers).to.deep.equal([
      { name: 'ExecuteError', selector: '0x5a154675', args: [{ name: 'index', type: 'uint256', value: '1' }] },
    ]);
    const postOp = decodeRevert(encode('PostOpReverted', [encode('TransferFromFailed', [])]));
    expect(postOp).to.deep.include({ kind: 'custom', name: 'TransferFromFailed' });
    expect(postOp.wrappers.map((w) => w.name)).to.deep.equal(['PostOpReverted']);
    const twice = decodeRevert(
      encode('FailedOpWithRevert', [0n, 'AA23 reverted', encode('ExecuteError', [0n, encode('Error', ['deep'])])]),
    );
    expect(twice).to.deep.include({ kind: 'Error', message: 'deep' });
    expect(twice.wrappers.map((w) => w.name)).to.deep.equal(['FailedOpWithRevert', 'ExecuteError']);
    // `revert(string(returnData))`: the string's bytes are the inner call's revert data (not UTF-8).
    const asString =
      `0x08c379a0${encodeAbiParameters([{ type: 'bytes' }], [encode('ERC20InsufficientBalance', [SENDER, 0n, 1n])]).slice(2)}` as Hex;
    expect(decodeRevert(asString)).to.deep.include({ kind: 'custom', name: 'ERC20InsufficientBalance' });
  });

  it('says unknown with the bytes for a selector no shipped ABI declares, or data its declaration does not decode', () => {
    const refused = encode('Refused', [7n]);
    expect(decodeRevert(refused)).to.deep.equal({
      kind: 'unknown',
      name: null,
      message: null,
      selector: refused.slice(0, 10),
      args: null,
      data: refused,
      wrappers: [],
    });
    // ERC20InsufficientBalance's selector, its arguments cut short.
    const cut = encode('ERC20InsufficientBalance', [SENDER, 0n, 1n]).slice(0, 74);
    expect(decodeRevert(cut)).to.deep.include({ kind: 'unknown', selector: '0xe450d38c', data: cut });
    expect(decodeRevert('0x1234')).to.deep.include({ kind: 'unknown', selector: null });
    // An unknown error inside a wrapper: the wrapper is named, the inner bytes kept.
    expect(decodeRevert(encode('PostOpReverted', [refused]))).to.deep.include({ kind: 'unknown', data: refused });
    expect(decodeRevert('0x')).to.deep.include({ kind: 'empty', data: '0x' });
    expect(decodeRevert(null)).to.deep.include({ kind: 'empty', data: '0x' });
  });

  it('builds its list from the EntryPoint packages and the vendors, each signature once', () => {
    const signatures = knownErrorSignatures();
    expect(new Set(signatures).size).to.equal(signatures.length);
    for (const s of [
      'FailedOpWithRevert(uint256,string,bytes)',
      'PostOpReverted(bytes)',
      'ExecuteError(uint256,bytes)',
      'TransferFromFailed()',
    ])
      expect(signatures, s).to.include(s);
  });
});

describe('opFailure over real traces (anvil callTracer)', function () {
  this.timeout(60_000);
  let chain: Chain;
  let from: string;
  let reverter: string;
  let multicall: string;
  const REVERTER = parseAbi([
    'function failPanic(uint256)',
    'function fail(string)',
    'function failEmpty()',
    'function failCustom(uint256)',
  ]);
  const MULTICALL = parseAbi(['function aggregate((address target, bytes data)[] calls)']);

  const deploy = async (bytecode: string): Promise<string> => {
    const hash = await chain.rpc.call<string>('eth_sendTransaction', [{ from, data: bytecode, gas: '0x2dc6c0' }]);
    for (;;) {
      const receipt = await chain.rpc.call<{ contractAddress: string } | null>('eth_getTransactionReceipt', [hash]);
      if (receipt) return receipt.contractAddress.toLowerCase();
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const trace = (to: string, data: Hex): Promise<CallFrame> =>
    chain.rpc.call<CallFrame>('debug_traceCall', [{ from, to, data, gas: '0x1e8480' }, 'latest', { tracer: 'callTracer' }]);
  const aggregate = (calls: Array<{ target: string; data: Hex }>): Hex =>
    encodeFunctionData({
      abi: MULTICALL,
      functionName: 'aggregate',
      args: [calls.map((c) => ({ target: c.target as Hex, data: c.data }))],
    });

  before(async () => {
    chain = await startChain();
    from = (await chain.rpc.call<string[]>('eth_accounts'))[0]!;
    reverter = await deploy(fixtureArtifact('Reverter').bytecode);
    multicall = await deploy(fixtureArtifact('BundleMulticall').bytecode);
  });
  after(async () => {
    await chain?.stop();
  });

  it('follows the revert data down to the call that raised it, at its depth', async () => {
    const panic = encodeFunctionData({ abi: REVERTER, functionName: 'failPanic', args: [5n] });
    // multicall (depth 0) → multicall (1) → reverter (2): the Panic bubbles up unchanged.
    const root = await trace(multicall, aggregate([{ target: multicall, data: aggregate([{ target: reverter, data: panic }]) }]));
    expect(root.error).to.be.a('string');
    const found = failingFrame(root, root.output!);
    expect(found?.depth).to.equal(2);
    expect(found?.frame.to?.toLowerCase()).to.equal(reverter);
    expect(found?.frame.input).to.equal(panic);
    const failure = diagnoseFailure({ failure: 'execution_reverted', revertReason: root.output! }, root);
    expect(failure).to.deep.include({ stage: 'execution', kind: 'Panic', message: 'arithmetic overflow' });
    expect(failure?.frame).to.deep.equal({ to: reverter, selector: panic.slice(0, 10), method: null, depth: 2, error: found?.frame.error });
    expect(failureInWords(failure!)).to.equal(`Panic: arithmetic overflow in ${panic.slice(0, 10)} at depth 2`);
  });

  it('stops at a call that raised its own error, and at a revert with no data', async () => {
    const custom = encodeFunctionData({ abi: REVERTER, functionName: 'failCustom', args: [9n] });
    const empty = encodeFunctionData({ abi: REVERTER, functionName: 'failEmpty' });
    const root = await trace(multicall, aggregate([{ target: reverter, data: custom }]));
    const failure = diagnoseFailure({ failure: 'execution_reverted', revertReason: root.output! }, root);
    expect(failure).to.deep.include({ kind: 'custom', name: 'ERC20InsufficientBalance' });
    expect(failure?.args?.[0]).to.deep.equal({ name: 'sender', type: 'address', value: multicall });
    expect(failure?.frame?.depth).to.equal(1);
    const none = await trace(multicall, aggregate([{ target: reverter, data: empty }]));
    const silent = diagnoseFailure({ failure: 'execution_reverted', revertReason: null }, none);
    expect(silent).to.deep.include({ kind: 'empty', name: null, data: '0x' });
    expect(silent?.frame).to.deep.include({ to: reverter, depth: 1 });
    // Revert data the trace does not hold: no frame is named.
    expect(diagnoseFailure({ failure: 'execution_reverted', revertReason: encode('Error', ['elsewhere']) }, root)?.frame).to.equal(null);
  });

  it('answers null for an op that succeeded and names a prefund that fell short', () => {
    expect(diagnoseFailure({ failure: null, revertReason: null }, null)).to.equal(null);
    expect(diagnoseFailure({ failure: 'prefund_too_low', revertReason: null }, null)).to.deep.include({
      stage: 'postOp',
      kind: 'empty',
      name: 'UserOperationPrefundTooLow',
    });
  });
});
