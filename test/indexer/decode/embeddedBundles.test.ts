/**
 * Bundles read inside a wrapper's input (no trace): taken only when the ops' recomputed hashes
 * equal the logged ones and exactly one candidate holds the bundle. userOpHashOf is checked against
 * the devnet's own (independent, ethers-built) userOpHash for every version it generates.
 */
import { expect } from 'chai';
import { AbiCoder, Interface } from 'ethers';
import { EP_VERSIONS, encodeHandleOps, userOpHash, type EpVersion, type UserOp } from '../../../devnet/userop.js';
import { bundlesFromInput } from '../../../indexer/decode/embeddedBundles.js';
import { decoderFor } from '../../../indexer/decode/entryPointDecoder.js';
import { userOpHashOf } from '../../../indexer/decode/userOpHash.js';
import { wasmKeccakReady } from '../../../shared/keccak.js';
import type { LogBundle, LogOp } from '../../../indexer/decode/bundleLogs.js';
import { CANONICAL_ENTRYPOINTS } from '../../../shared/chain/constants.js';

const CHAIN_ID = 8453;
const ENTRY_POINT = CANONICAL_ENTRYPOINTS['v0.7'];
const multicall = new Interface(['function aggregate((address target, bytes data)[] calls)']);

const op = (i: number, version: EpVersion): UserOp => ({
  sender: `0x${(0xa0 + i).toString(16).padStart(40, '0')}`,
  nonce: BigInt(i) << 64n,
  initCode: i === 0 ? `0x${'fa'.repeat(20)}${'01'.repeat(36)}` : '0x',
  callData: `0xb61d27f6${'00'.repeat(96 + i)}`,
  callGasLimit: 100_000n + BigInt(i),
  verificationGasLimit: 200_000n,
  preVerificationGas: 50_000n,
  maxFeePerGas: 3_000_000_000n,
  maxPriorityFeePerGas: 1_000_000_000n,
  paymasterAndData: version === 'v0.6' ? `0x${'cc'.repeat(20)}` : `0x${'cc'.repeat(20)}${'00'.repeat(15)}64${'00'.repeat(15)}32`,
  signature: `0x${'11'.repeat(65)}`,
});

/** The logs' view of a bundle of `ops` (what bundlesFromInput checks candidates against). */
function logBundle(ops: UserOp[], version: EpVersion, bundleIndex: number): LogBundle {
  return {
    bundleIndex,
    entryPoint: ENTRY_POINT,
    version,
    aggregated: false,
    ops: ops.map(
      (o, i) => ({ userOpHash: userOpHash(o, version, ENTRY_POINT, CHAIN_ID), sender: o.sender, nonce: o.nonce, logIndex: i }) as LogOp,
    ),
  };
}

describe('decode/embeddedBundles', () => {
  for (const version of EP_VERSIONS) {
    it(`recomputes ${version} userOpHashes as the EntryPoint does, with the WebAssembly keccak`, async () => {
      await wasmKeccakReady;
      const ops = [op(0, version), op(1, version)];
      const call = decoderFor(version).decodeHandleOps(encodeHandleOps(version, ops, ENTRY_POINT))!;
      for (const [i, decoded] of call.ops.entries()) {
        expect(userOpHashOf(decoded, version, ENTRY_POINT, CHAIN_ID)).to.equal(userOpHash(ops[i]!, version, ENTRY_POINT, CHAIN_ID));
      }
    });
  }

  it('finds each bundle of a multicall inside its input, in log order', () => {
    const v07 = [op(1, 'v0.7'), op(2, 'v0.7')];
    const v06 = [op(3, 'v0.6')];
    const input = multicall.encodeFunctionData('aggregate', [
      [
        { target: ENTRY_POINT, data: encodeHandleOps('v0.7', v07, ENTRY_POINT) },
        { target: ENTRY_POINT, data: encodeHandleOps('v0.6', v06, ENTRY_POINT) },
      ],
    ]);
    const calls = bundlesFromInput(input, [logBundle(v07, 'v0.7', 0), logBundle(v06, 'v0.6', 1)], CHAIN_ID);
    expect(calls?.map((c) => c.call.ops.map((o) => o.sender))).to.deep.equal([v07.map((o) => o.sender), v06.map((o) => o.sender)]);
  });

  it('leaves to a trace: a candidate whose hashed fields differ, two candidates for one bundle, calldata not in the input', () => {
    const ops = [op(1, 'v0.8')];
    const logs = [logBundle(ops, 'v0.8', 0)];
    const wrap = (...datas: string[]) => multicall.encodeFunctionData('aggregate', [datas.map((data) => ({ target: ENTRY_POINT, data }))]);
    const real = encodeHandleOps('v0.8', ops, ENTRY_POINT);
    expect(bundlesFromInput(wrap(real), logs, CHAIN_ID)).to.not.equal(null);
    // Same sender and nonce, another gas limit: not what the EntryPoint logged.
    const altered = encodeHandleOps('v0.8', [{ ...ops[0]!, callGasLimit: 1n }], ENTRY_POINT);
    expect(bundlesFromInput(wrap(altered), logs, CHAIN_ID)).to.equal(null);
    // The same calldata twice (a retry inside the wrapper): which one ran only a trace tells.
    expect(bundlesFromInput(wrap(real, real), logs, CHAIN_ID)).to.equal(null);
    // Calldata the wrapper carries in another form (here: abi-encoded as a string of its hex).
    expect(bundlesFromInput(AbiCoder.defaultAbiCoder().encode(['string'], [real.toUpperCase()]), logs, CHAIN_ID)).to.equal(null);
    // On another chain the same calldata hashes differently.
    expect(bundlesFromInput(wrap(real), logs, CHAIN_ID + 1)).to.equal(null);
  });
});
