/**
 * One bundle transaction from logs + calldata (+ trace), in its edge cases: failures (reverts
 * with and without a reason, postOp reverts, a prefund too low), several ops and bundles in one
 * transaction, aggregated bundles, account deployments, deposits outside bundles, bundles sent
 * through a wrapper, missing traces and nested bundles.
 */
import { expect } from 'chai';
import { AbiCoder, Interface, id } from 'ethers';
import { decodeTransaction } from '../../../indexer/decode/decodeTransaction.js';
import { decodeRange } from '../../../indexer/decode/decodeRange.js';
import { logOwners } from '../../../shared/db/tables/logs.js';
import { SELECTORS } from '../../../indexer/decode/abi.js';
import { ENTRY_POINT_V07 } from '../../../indexer/decode/abi.js';
import {
  addr,
  ENTRY_POINTS,
  EP06,
  EP07,
  frame,
  handleAggregatedOpsV06,
  handleAggregatedOpsV07,
  handleOpsV06,
  handleOpsV07,
  hash,
  TxBuilder,
  ZERO,
} from './builders.js';

const ctx = { chainId: 31337, entryPoints: ENTRY_POINTS, traces: 'off' as const };
const beneficiary = addr(0xbe);
const abi = AbiCoder.defaultAbiCoder();
const errorString = (s: string): string => id('Error(string)').slice(0, 10) + abi.encode(['string'], [s]).slice(2);
const execute = new Interface(['function execute(address,uint256,bytes)']);

describe('decode/decodeTransaction', () => {
  it('matches calldata ops to events by (sender, nonce): new accounts all have nonce 0, same paymaster', () => {
    const pm = addr(0x9a);
    const ops = [addr(1), addr(2), addr(3)].map((sender, i) => ({
      sender,
      nonce: 0n,
      callData: execute.encodeFunctionData('execute', [addr(0x70 + i), BigInt(i), '0x']),
    }));
    const b = new TxBuilder().beforeExecution(EP07);
    // Events in a different order than calldata would only happen with a broken decoder; matching must not care.
    for (const [i, o] of [
      [2, ops[2]!],
      [0, ops[0]!],
      [1, ops[1]!],
    ] as const)
      b.opEvent(EP07, { hash: hash(10 + i), sender: o.sender, paymaster: pm, nonce: 0n });
    const d = decodeTransaction(b.raw(handleOpsV07(ops, beneficiary)), ctx);
    expect(d.userOps.map((o) => [o.userOpHash, o.sender, o.opIndex, o.calls[0]?.target, o.decodeStatus])).to.deep.equal([
      [hash(12), addr(3), 2, addr(0x72), 'ok'],
      [hash(10), addr(1), 0, addr(0x70), 'ok'],
      [hash(11), addr(2), 1, addr(0x71), 'ok'],
    ]);
    expect(d.bundles).to.have.length(1);
    expect(d.bundles[0]).to.include({ opsCount: 3, beneficiary, bundler: addr(0xb0b), bundleIndex: 0 });
  });

  it('writes address rows only for parties no index finds: a later call target, not a first one or a transfer party', () => {
    const batch = new Interface(['function executeBatch(address[],bytes[])']);
    const token = addr(0xe2);
    const ops = [
      {
        sender: addr(1),
        nonce: 0n,
        callData: batch.encodeFunctionData('executeBatch', [
          [addr(0x70), addr(0x71)],
          ['0x', '0x'],
        ]),
      },
      { sender: addr(2), nonce: 0n, callData: execute.encodeFunctionData('execute', [addr(0x72), 5n, '0x']) },
    ];
    const b = new TxBuilder()
      .beforeExecution(EP07)
      .log(token, 'Transfer', [addr(1), addr(0x73), 10n])
      .log(token, 'Transfer', [ZERO, addr(0x74), 1n])
      .opEvent(EP07, { hash: hash(10), sender: addr(1), nonce: 0n })
      .opEvent(EP07, { hash: hash(11), sender: addr(2), nonce: 0n });
    const d = decodeTransaction(b.raw(handleOpsV07(ops, beneficiary)), ctx);
    expect(d.userOps.map((o) => o.calls.map((c) => c.target))).to.deep.equal([[addr(0x70), addr(0x71)], [addr(0x72)]]);
    expect(d.transfers.map((t) => [t.standard, t.from, t.to])).to.deep.include.members([
      ['ERC20', addr(1), addr(0x73)],
      ['ERC20', ZERO, addr(0x74)],
    ]);
    // The senders and bundler (user_ops_sender, user_ops_bundler), the first call targets
    // (user_ops_target) and the transfer parties (token_transfers_from, _to) are left to their indexes.
    expect(d.addressTxs.map((a) => a.address)).to.deep.equal([addr(0x71)]);
  });

  it('records failures: RevertReason with its message, empty revert, PostOpRevertReason, PrefundTooLow', () => {
    const senders = [addr(1), addr(2), addr(3), addr(4)];
    const b = new TxBuilder().beforeExecution(EP07);
    b.log(EP07, 'UserOperationRevertReason', [hash(1), senders[0], 0n, errorString('boom')]).opEvent(EP07, {
      hash: hash(1),
      sender: senders[0]!,
      nonce: 0n,
      success: false,
    });
    b.opEvent(EP07, { hash: hash(2), sender: senders[1]!, nonce: 0n, success: false });
    b.log(EP07, 'PostOpRevertReason', [hash(3), senders[2], 0n, errorString('postOp')]).opEvent(EP07, {
      hash: hash(3),
      sender: senders[2]!,
      nonce: 0n,
      success: false,
    });
    b.log(EP07, 'UserOperationPrefundTooLow', [hash(4), senders[3], 0n]).opEvent(EP07, {
      hash: hash(4),
      sender: senders[3]!,
      nonce: 0n,
      success: false,
      cost: 77n,
    });
    const d = decodeTransaction(
      b.raw(
        handleOpsV07(
          senders.map((s) => ({ sender: s, nonce: 0n })),
          beneficiary,
        ),
      ),
      ctx,
    );
    expect(d.userOps.map((o) => [o.failure, o.revertReason, o.revertMessage])).to.deep.equal([
      ['execution_reverted', errorString('boom'), 'boom'],
      ['execution_reverted', null, null],
      ['postop_reverted', errorString('postOp'), 'postOp'],
      ['prefund_too_low', null, null],
    ]);
    expect(d.userOps[3]!.actualGasCost).to.equal(77n);
    expect(d.bundles[0]).to.include({ opsFailed: 4 });
  });

  it('numbers bundles across EntryPoints in one transaction (a v0.6 and a v0.7 bundle via a multicall, from the trace)', () => {
    const op6 = { sender: addr(1), nonce: 4n };
    const op7 = { sender: addr(2), nonce: 9n };
    const b = new TxBuilder()
      .beforeExecution(EP06)
      .opEvent(EP06, { hash: hash(1), ...op6 })
      .beforeExecution(EP07)
      .opEvent(EP07, { hash: hash(2), ...op7 });
    const multicall = addr(0x3c);
    const trace = frame({
      to: multicall,
      input: '0x12345678',
      calls: [
        frame({ from: multicall, to: EP06, input: handleOpsV06([op6], addr(0xb6)) }),
        frame({ from: multicall, to: EP07, input: handleOpsV07([op7], addr(0xb7)) }),
      ],
    });
    const d = decodeTransaction(b.raw('0x12345678', { to: multicall, trace }), ctx);
    expect(d.bundles.map((x) => [x.bundleIndex, x.entryPoint, x.entryPointVersion, x.beneficiary])).to.deep.equal([
      [0, EP06, 'v0.6', addr(0xb6)],
      [1, EP07, 'v0.7', addr(0xb7)],
    ]);
    expect(d.userOps.map((o) => [o.bundleIndex, o.decodeStatus, o.bundler])).to.deep.equal([
      [0, 'ok', addr(0xb0b)],
      [1, 'ok', addr(0xb0b)],
    ]);
  });

  it('ignores a handleOps that reverted inside a wrapper that caught it (reverted-parent rule)', () => {
    const op = { sender: addr(1), nonce: 1n };
    const b = new TxBuilder().beforeExecution(EP07).opEvent(EP07, { hash: hash(1), ...op });
    const wrapper = addr(0x3c);
    const failed = frame({
      from: wrapper,
      to: EP07,
      input: handleOpsV07([{ ...op, callData: '0xdead' }], addr(0xbad)),
      error: 'execution reverted',
    });
    const inner = frame({ from: addr(0x3d), to: EP07, input: handleOpsV07([{ ...op, callData: '0xbeef' }], beneficiary) });
    const underReverted = frame({
      from: wrapper,
      to: addr(0x3d),
      input: '0x',
      error: 'execution reverted',
      calls: [frame({ from: addr(0x3d), to: EP07, input: handleOpsV07([{ ...op, callData: '0xcafe' }], addr(0xbad)) })],
    });
    const trace = frame({
      to: wrapper,
      input: '0x',
      calls: [failed, underReverted, frame({ from: wrapper, to: addr(0x3d), input: '0x', calls: [inner] })],
    });
    const d = decodeTransaction(b.raw('0x', { to: wrapper, trace }), ctx);
    expect(d.userOps[0]).to.include({ callData: '0xbeef', beneficiary, decodeStatus: 'ok' });
  });

  it('keeps ops from events when the EntryPoint was called indirectly and no trace is available', () => {
    const b = new TxBuilder().beforeExecution(EP07).opEvent(EP07, { hash: hash(1), sender: addr(1), nonce: 0n });
    const d = decodeTransaction(b.raw('0x', { to: addr(0x3c), trace: null }), ctx);
    expect(d.userOps).to.have.length(1);
    expect(d.userOps[0]).to.include({ decodeStatus: 'trace_needed', callData: null, beneficiary: null, actualGasCost: 1000n });
  });

  it('keeps an op whose callData has an unknown selector, with no calls', () => {
    const b = new TxBuilder().beforeExecution(EP07).opEvent(EP07, { hash: hash(1), sender: addr(1), nonce: 0n });
    const d = decodeTransaction(b.raw(handleOpsV07([{ sender: addr(1), nonce: 0n, callData: '0xfeedface' }], beneficiary)), ctx);
    expect(d.userOps[0]).to.include({ decodeStatus: 'ok', callData: '0xfeedface' });
    expect(d.userOps[0]!.calls).to.deep.equal([]);
  });

  it('attributes each AccountDeployed to its own op when two accounts are deployed in one bundle', () => {
    const [f1, f2] = [addr(0xf1), addr(0xf2)];
    const b = new TxBuilder()
      .log(EP07, 'AccountDeployed', [hash(1), addr(1), f1, ZERO])
      .log(EP07, 'AccountDeployed', [hash(2), addr(2), f2, ZERO])
      .beforeExecution(EP07)
      .opEvent(EP07, { hash: hash(1), sender: addr(1), nonce: 0n })
      .opEvent(EP07, { hash: hash(2), sender: addr(2), nonce: 0n });
    const d = decodeTransaction(
      b.raw(
        handleOpsV07(
          [
            { sender: addr(1), nonce: 0n, initCode: f1 },
            { sender: addr(2), nonce: 0n, initCode: f2 },
          ],
          beneficiary,
        ),
      ),
      ctx,
    );
    expect(d.userOps.map((o) => [o.sender, o.factory, o.deployedLogIndex])).to.deep.equal([
      [addr(1), f1, 0],
      [addr(2), f2, 1],
    ]);
  });

  it('credits no factory to initCode without an AccountDeployed (EIP-7702 marker, v0.9 IgnoredInitCode)', () => {
    const marker7702 = `0x7702${'0'.repeat(36)}`;
    const b = new TxBuilder()
      .beforeExecution(EP07)
      .opEvent(EP07, { hash: hash(1), sender: addr(1), nonce: 0n })
      .opEvent(EP07, { hash: hash(2), sender: addr(2), nonce: 0n });
    const d = decodeTransaction(
      b.raw(
        handleOpsV07(
          [
            { sender: addr(1), nonce: 0n, initCode: marker7702 },
            { sender: addr(2), nonce: 0n, initCode: `${addr(0xf1)}abcd` },
          ],
          beneficiary,
        ),
      ),
      ctx,
    );
    expect(d.userOps.map((o) => [o.initCode, o.factory])).to.deep.equal([
      [marker7702, null],
      [`${addr(0xf1)}abcd`, null],
    ]);
  });

  it('v0.7 handleAggregatedOps: two aggregator groups and SignatureAggregatorChanged(0) at the end', () => {
    const groups = [
      { aggregator: addr(0xa1), ops: [{ sender: addr(1), nonce: 0n }] },
      { aggregator: addr(0xa2), ops: [{ sender: addr(2), nonce: 0n }] },
    ];
    const b = new TxBuilder().beforeExecution(EP07);
    b.log(EP07, 'SignatureAggregatorChanged', [addr(0xa1)]).opEvent(EP07, { hash: hash(1), sender: addr(1), nonce: 0n });
    b.log(EP07, 'SignatureAggregatorChanged', [addr(0xa2)]).opEvent(EP07, { hash: hash(2), sender: addr(2), nonce: 0n });
    b.log(EP07, 'SignatureAggregatorChanged', [ZERO]);
    const d = decodeTransaction(b.raw(handleAggregatedOpsV07(groups, beneficiary)), ctx);
    expect(d.userOps.map((o) => o.aggregator)).to.deep.equal([addr(0xa1), addr(0xa2)]);
    expect(d.bundles[0]).to.include({ aggregated: true, opsCount: 2 });
  });

  it('v0.6 handleAggregatedOps: validation logs after BeforeExecution stay out of the first op’s slice', () => {
    const b = new TxBuilder(hash(0xabc), 100).beforeExecution(EP06);
    b.log(EP06, 'AccountDeployed', [hash(1), addr(1), addr(0xf1), ZERO]).log(EP06, 'Deposited', [addr(1), 5n]);
    b.log(EP06, 'SignatureAggregatorChanged', [addr(0xa1)]);
    b.log(addr(0x70), 'Transfer', [addr(1), addr(9), 3n]).opEvent(EP06, { hash: hash(1), sender: addr(1), nonce: 0n });
    b.log(EP06, 'SignatureAggregatorChanged', [ZERO]);
    const d = decodeTransaction(
      b.raw(handleAggregatedOpsV06([{ aggregator: addr(0xa1), ops: [{ sender: addr(1), nonce: 0n }] }], beneficiary), { to: EP06 }),
      ctx,
    );
    expect(d.userOps[0]).to.include({ execLogFrom: 4, execLogTo: 6, aggregator: addr(0xa1), factory: addr(0xf1) });
    expect(logOwners(d.userOps, d.bundleTx.firstLogIndex, d.bundleTx.logs.length)).to.deep.equal([
      null,
      null,
      null,
      null,
      hash(1),
      hash(1),
      null,
    ]);
    expect(d.transfers).to.have.length(1);
    expect(d.transfers[0]).to.include({ userOpHash: hash(1), standard: 'ERC20', value: 3n });
  });

  it('nested bundle: logs of an inner bundle executed by an op belong to the inner ops', () => {
    // Outer v0.7 op 1 executes a v0.6 handleOps holding op 2.
    // The transaction's logs start at block-level index 20.
    const b = new TxBuilder(hash(0xabc), 100, 20).beforeExecution(EP07);
    b.beforeExecution(EP06)
      .log(addr(0x70), 'Transfer', [addr(2), addr(9), 1n])
      .opEvent(EP06, { hash: hash(2), sender: addr(2), nonce: 0n });
    b.log(addr(0x70), 'Transfer', [addr(1), addr(9), 2n]).opEvent(EP07, { hash: hash(1), sender: addr(1), nonce: 0n });
    const d = decodeTransaction(b.raw(handleOpsV07([{ sender: addr(1), nonce: 0n }], beneficiary), { trace: undefined }), ctx);
    expect(d.bundles.map((x) => [x.bundleIndex, x.entryPoint, x.opsCount])).to.deep.equal([
      [0, EP07, 1],
      [1, EP06, 1],
    ]);
    expect(d.transfers.map((t) => [t.value, t.userOpHash])).to.deep.equal([
      [1n, hash(2)],
      [2n, hash(1)],
    ]);
    // Outer BeforeExecution, inner BeforeExecution (in op 1's execution), Transfer, op 2's event,
    // Transfer, op 1's event: each op's slice ends with its own event.
    expect(d.bundleTx).to.include({ firstLogIndex: 20 });
    expect(logOwners(d.userOps, d.bundleTx.firstLogIndex, d.bundleTx.logs.length)).to.deep.equal([
      null,
      hash(1),
      hash(2),
      hash(2),
      hash(1),
      hash(1),
    ]);
  });

  it('finds each op’s innerHandleOp frame in the trace (its stored execution trace)', () => {
    const op = { sender: addr(1), nonce: 0n };
    const b = new TxBuilder().beforeExecution(EP07).opEvent(EP07, { hash: hash(1), ...op });
    const memoryOp = [addr(1), 0n, 1n, 2n, 3n, 4n, 5n, ZERO, 6n, 7n];
    const innerInput = ENTRY_POINT_V07.encodeFunctionData('innerHandleOp', ['0x', [memoryOp, hash(1), 0n, 0n, 0n], '0x']);
    expect(innerInput.slice(0, 10)).to.equal(SELECTORS.innerHandleOpV07);
    const inner = frame({ from: EP07, to: EP07, input: innerInput, calls: [frame({ from: EP07, to: addr(1), input: '0xb61d27f6' })] });
    const trace = frame({ to: EP07, input: handleOpsV07([op], beneficiary), calls: [inner] });
    const d = decodeTransaction(b.raw(handleOpsV07([op], beneficiary), { trace }), { ...ctx, traces: 'all' });
    expect(d.traces).to.deep.equal([{ userOpHash: hash(1), status: 'ok', trace: inner }]);
  });
});

describe('decode/decodeRange', () => {
  it('stores a Deposited outside any bundle (a paymaster top-up) without creating ops', () => {
    const topUp = new TxBuilder(hash(0xdef), 100, 5).log(EP07, 'Deposited', [addr(0x9a), 10n ** 18n]);
    const batch = decodeRange(
      {
        chainId: 1,
        fromBlock: 100,
        toBlock: 100,
        headers: [],
        entryPointLogs: topUp.logs,
        bundleTxs: [],
        blockTimes: new Map([[100, 1]]),
        tracesSupported: true,
      },
      ENTRY_POINTS,
      'off',
    );
    expect(batch.userOps).to.deep.equal([]);
    expect(batch.deposits).to.deep.equal([
      {
        blockNumber: 100,
        logIndex: 5,
        txHash: hash(0xdef),
        entryPoint: EP07,
        account: addr(0x9a),
        event: 'Deposited',
        amount: null,
        totalDeposit: 10n ** 18n,
      },
    ]);
  });
});
