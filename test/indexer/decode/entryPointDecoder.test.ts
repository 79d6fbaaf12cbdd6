/**
 * handleOps calldata decoding per EntryPoint family: exact large integers, the v0.7 packed-field
 * order (checked by recomputing the userOpHash from the decoded fields), paymasterAndData splits,
 * aggregated bundles and 2D nonces.
 */
import { expect } from 'chai';
import { userOpHash } from '../../../devnet/index.js';
import { decoderFor } from '../../../indexer/decode/entryPointDecoder.js';
import { addr, EP07, handleAggregatedOpsV06, handleAggregatedOpsV07, handleOpsV06, handleOpsV07, packPaymaster } from './builders.js';

const beneficiary = addr(0xbe);

describe('decode/entryPointDecoder', () => {
  it('decodes v0.6 gas values above 2^64 and 2^128 exactly', () => {
    const big = {
      callGasLimit: (1n << 200n) + 7n,
      verificationGasLimit: (1n << 64n) + 1n,
      preVerificationGas: (1n << 128n) + 3n,
      maxFeePerGas: (1n << 255n) - 1n,
      maxPriorityFeePerGas: 1n << 130n,
    };
    const call = decoderFor('v0.6').decodeHandleOps(handleOpsV06([{ sender: addr(1), nonce: 5n, ...big }], beneficiary))!;
    expect(call.beneficiary).to.equal(beneficiary);
    expect(call.ops[0]).to.include({ sender: addr(1), nonce: 5n, ...big, accountGasLimits: null, gasFees: null });
  });

  it('unpacks v0.7 accountGasLimits and gasFees high/low the right way round (the userOpHash recomputes)', () => {
    const fields = {
      sender: addr(2),
      nonce: (0x2105n << 64n) | 2n,
      initCode: '0x1234',
      callData: '0xabcdef',
      callGasLimit: 111n,
      verificationGasLimit: 222n,
      preVerificationGas: 333n,
      maxFeePerGas: 5_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      paymasterAndData: '0x',
      signature: '0x99',
    };
    const op = decoderFor('v0.7').decodeHandleOps(handleOpsV07([fields], beneficiary))!.ops[0]!;
    expect(op).to.include({
      callGasLimit: 111n,
      verificationGasLimit: 222n,
      maxFeePerGas: 5_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    });
    expect(op.accountGasLimits).to.equal(`0x${222n.toString(16).padStart(32, '0')}${111n.toString(16).padStart(32, '0')}`);
    const recomputed = userOpHash({ ...op, signature: op.signature }, 'v0.7', EP07, 31337);
    expect(recomputed).to.equal(userOpHash(fields, 'v0.7', EP07, 31337));
    // A flipped fee pair (blockscout's bug) would hash differently.
    expect(
      userOpHash({ ...op, maxFeePerGas: op.maxPriorityFeePerGas, maxPriorityFeePerGas: op.maxFeePerGas }, 'v0.7', EP07, 31337),
    ).to.not.equal(recomputed);
  });

  it('decodes every field the userOpHash covers, for v0.6, v0.7 and v0.8 (the recomputed hash equals the original)', () => {
    const fields = {
      sender: addr(9),
      nonce: (0x4337n << 64n) | 1n,
      initCode: '0xabcdef01',
      callData: '0xb61d27f6',
      callGasLimit: 123_456n,
      verificationGasLimit: 654_321n,
      preVerificationGas: 42_000n,
      maxFeePerGas: 7_000_000_000n,
      maxPriorityFeePerGas: 2_000_000_000n,
      paymasterAndData: '0x',
      signature: '0x01',
    };
    for (const version of ['v0.6', 'v0.7', 'v0.8'] as const) {
      const input = version === 'v0.6' ? handleOpsV06([fields], beneficiary) : handleOpsV07([fields], beneficiary);
      const op = decoderFor(version).decodeHandleOps(input)!.ops[0]!;
      expect(userOpHash(op, version, EP07, 1), version).to.equal(userOpHash(fields, version, EP07, 1));
    }
  });

  it('keeps a 2D nonce (192-bit key, sequence 0) exactly', () => {
    const nonce = ((1n << 191n) | 0x4337n) << 64n;
    expect(decoderFor('v0.7').decodeHandleOps(handleOpsV07([{ sender: addr(3), nonce }], beneficiary))!.ops[0]!.nonce).to.equal(nonce);
  });

  it('splits v0.7 paymasterAndData at 20/36/52 bytes (empty, exactly 52, longer)', () => {
    const pm = addr(0x9a);
    const cases = [
      { pad: '0x', want: [null, null] },
      { pad: packPaymaster(pm, 60_000n, 0n), want: [60_000n, 0n] },
      { pad: packPaymaster(pm, 1n << 100n, 70_000n, '0xdeadbeef'), want: [1n << 100n, 70_000n] },
    ];
    for (const c of cases) {
      const op = decoderFor('v0.8').decodeHandleOps(handleOpsV07([{ sender: addr(4), nonce: 0n, paymasterAndData: c.pad }], beneficiary))!
        .ops[0]!;
      expect([op.paymasterVerificationGasLimit, op.paymasterPostOpGasLimit], c.pad).to.deep.equal(c.want);
      expect(op.paymasterAndData).to.equal(c.pad);
    }
  });

  it('flattens handleAggregatedOps groups with each op’s aggregator and bundle position (v0.6 and v0.7)', () => {
    const groups = [
      {
        aggregator: addr(0xa1),
        ops: [
          { sender: addr(5), nonce: 0n },
          { sender: addr(6), nonce: 0n },
        ],
      },
      { aggregator: addr(0xa2), ops: [{ sender: addr(7), nonce: 1n }] },
    ];
    for (const [version, input] of [
      ['v0.6', handleAggregatedOpsV06(groups, beneficiary)],
      ['v0.7', handleAggregatedOpsV07(groups, beneficiary)],
    ] as const) {
      const call = decoderFor(version).decodeHandleOps(input)!;
      expect(call.aggregated).to.equal(true);
      expect(
        call.ops.map((o) => [o.sender, o.aggregator, o.opIndex]),
        version,
      ).to.deep.equal([
        [addr(5), addr(0xa1), 0],
        [addr(6), addr(0xa1), 1],
        [addr(7), addr(0xa2), 2],
      ]);
    }
  });

  it('answers null for calldata that is not a bundle call of its family', () => {
    expect(decoderFor('v0.6').decodeHandleOps(handleOpsV07([{ sender: addr(1), nonce: 0n }], beneficiary))).to.equal(null);
    expect(decoderFor('v0.7').decodeHandleOps('0x12345678')).to.equal(null);
  });
});
