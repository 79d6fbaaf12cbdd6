/**
 * The hex-string ABI reader against ethers' Interface (the reference) on many random handleOps
 * calls of both struct families, plain and aggregated, and on malformed calldata.
 */
import { expect } from 'chai';
import { Random } from '../../../devnet/random.js';
import { decoderFor } from '../../../indexer/decode/entryPointDecoder.js';
import { ENTRY_POINT_V06, ENTRY_POINT_V07 } from '../../../indexer/decode/abi.js';
import { AbiReadError, HexReader } from '../../../shared/calldata/hexAbi.js';
import { addr, handleAggregatedOpsV06, handleAggregatedOpsV07, handleOpsV06, handleOpsV07, type OpFields } from './builders.js';

const rng = new Random(4337);
const bigUint = (): bigint => BigInt(rng.int(0, 2 ** 30)) << BigInt(rng.int(0, 96)); // < 2^128: v0.7 packs pairs
const hexBytes = (max: number): string =>
  `0x${Array.from({ length: rng.int(0, max) }, () => rng.int(0, 255).toString(16).padStart(2, '0')).join('')}`;
const randomOp = (): OpFields => ({
  sender: addr(rng.int(1, 2 ** 30)),
  nonce: bigUint(),
  initCode: hexBytes(80),
  callData: hexBytes(300),
  callGasLimit: bigUint(),
  verificationGasLimit: bigUint(),
  preVerificationGas: bigUint(),
  maxFeePerGas: bigUint(),
  maxPriorityFeePerGas: bigUint(),
  paymasterAndData: hexBytes(90),
  signature: hexBytes(70),
});
const ops = (n: number): OpFields[] => Array.from({ length: n }, randomOp);

describe('decode/hexAbi', () => {
  it('decodes 200 random v0.6 and v0.7 bundle calls exactly as ethers does', () => {
    for (let i = 0; i < 200; i++) {
      const v06 = i % 2 === 0;
      const beneficiary = addr(rng.int(1, 1000));
      const aggregated = i % 5 === 0;
      const groups = [
        { aggregator: addr(0xa1), ops: ops(rng.int(0, 3)) },
        { aggregator: addr(0xa2), ops: ops(rng.int(1, 3)) },
      ];
      const plain = ops(rng.int(0, 6));
      const input = aggregated
        ? (v06 ? handleAggregatedOpsV06 : handleAggregatedOpsV07)(groups, beneficiary)
        : (v06 ? handleOpsV06 : handleOpsV07)(plain, beneficiary);
      const ours = decoderFor(v06 ? 'v0.6' : 'v0.7').decodeHandleOps(input)!;
      const iface = v06 ? ENTRY_POINT_V06 : ENTRY_POINT_V07;
      const [decoded] = iface.decodeFunctionData(aggregated ? 'handleAggregatedOps' : 'handleOps', input);
      const reference = aggregated ? (decoded as unknown[][]).flatMap((g) => g[0] as unknown[][]) : (decoded as unknown[][]);
      expect(ours.ops).to.have.length(reference.length);
      ours.ops.forEach((op, k) => {
        const r = reference[k]!;
        expect([op.sender, op.nonce, op.initCode, op.callData], `call ${i} op ${k}`).to.deep.equal([
          String(r[0]).toLowerCase(),
          r[1],
          r[2],
          r[3],
        ]);
        expect(op.signature).to.equal(r[v06 ? 10 : 8]);
        expect(op.paymasterAndData).to.equal(r[v06 ? 9 : 7]);
        if (v06)
          expect([op.callGasLimit, op.verificationGasLimit, op.preVerificationGas, op.maxFeePerGas, op.maxPriorityFeePerGas]).to.deep.equal(
            [r[4], r[5], r[6], r[7], r[8]],
          );
        else expect([op.accountGasLimits, op.preVerificationGas, op.gasFees]).to.deep.equal([r[4], r[5], r[6]]);
      });
    }
  });

  it('refuses reads past the end instead of inventing data', () => {
    const input = handleOpsV07(ops(2), addr(1));
    expect(() => decoderFor('v0.7').decodeHandleOps(input.slice(0, input.length - 100))).to.throw(AbiReadError);
    expect(() => new HexReader('00').word(0)).to.throw(AbiReadError);
    const hugeOffset = new HexReader('f'.repeat(64));
    expect(() => hugeOffset.bytes(0, 0)).to.throw(AbiReadError);
  });
});
