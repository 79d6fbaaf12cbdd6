/**
 * Account call decoding for every execute shape (shared/calldata/accountCalls.ts): the executeBatch
 * variants (a v0.7 one with an empty value array), ERC-7579 single, batch and delegatecall modes, a
 * Safe executeUserOp with a MultiSend delegatecall, the v0.7 executeUserOp wrapper, and an unknown
 * selector (no calls, the op kept).
 */
import { expect } from 'chai';
import { AbiCoder, Interface, concat, toBeHex, zeroPadValue } from 'ethers';
import { decodeAccountCalls } from '../../../shared/calldata/accountCalls.js';
import { addr } from './builders.js';

const accounts = new Interface([
  'function execute(address,uint256,bytes)',
  'function executeBatch(address[],bytes[])',
  'function executeBatch(address[],uint256[],bytes[])',
  'function executeBatch((address,uint256,bytes)[])',
  'function execute(bytes32,bytes)',
  'function execute(address,uint256,bytes,uint8)',
  'function executeUserOp(address,uint256,bytes,uint8)',
  'function execute_ncC(address,uint256,bytes)',
  'function executeBatch_y6U(address[],uint256[],bytes[])',
]);
const encode = (sig: string, args: unknown[]): string => accounts.encodeFunctionData(sig, args);
const abi = AbiCoder.defaultAbiCoder();
const [a, b] = [addr(0xa), addr(0xb)];

describe('decode/accountCalls', () => {
  it('decodes execute(address,uint256,bytes)', () => {
    expect(encode('execute(address,uint256,bytes)', [a, 5n, '0x1234']).slice(0, 10)).to.equal('0xb61d27f6');
    expect(decodeAccountCalls(encode('execute(address,uint256,bytes)', [a, 5n, '0x1234']))).to.deep.equal([
      { target: a, value: 5n, data: '0x1234' },
    ]);
  });

  it('decodes the three executeBatch variants, a v0.7 empty value array meaning all zero', () => {
    expect(
      decodeAccountCalls(
        encode('executeBatch(address[],bytes[])', [
          [a, b],
          ['0x01', '0x02'],
        ]),
      ),
    ).to.deep.equal([
      { target: a, value: 0n, data: '0x01' },
      { target: b, value: 0n, data: '0x02' },
    ]);
    expect(decodeAccountCalls(encode('executeBatch(address[],uint256[],bytes[])', [[a, b], [], ['0x01', '0x02']]))).to.deep.equal([
      { target: a, value: 0n, data: '0x01' },
      { target: b, value: 0n, data: '0x02' },
    ]);
    expect(
      decodeAccountCalls(
        encode('executeBatch(address[],uint256[],bytes[])', [
          [a, b],
          [1n, 2n],
          ['0x01', '0x'],
        ]),
      ),
    ).to.deep.equal([
      { target: a, value: 1n, data: '0x01' },
      { target: b, value: 2n, data: '0x' },
    ]);
    expect(
      decodeAccountCalls(
        encode('executeBatch((address,uint256,bytes)[])', [
          [
            [a, 3n, '0xab'],
            [b, 0n, '0x'],
          ],
        ]),
      ),
    ).to.deep.equal([
      { target: a, value: 3n, data: '0xab' },
      { target: b, value: 0n, data: '0x' },
    ]);
  });

  it('decodes ERC-7579 execute in single, batch and delegatecall modes', () => {
    const mode = (callType: string): string => `0x${callType}${'00'.repeat(31)}`;
    const single = concat([a, zeroPadValue(toBeHex(9n), 32), '0xcafe']);
    expect(decodeAccountCalls(encode('execute(bytes32,bytes)', [mode('00'), single]))).to.deep.equal([
      { target: a, value: 9n, data: '0xcafe' },
    ]);
    const batch = abi.encode(
      ['(address,uint256,bytes)[]'],
      [
        [
          [a, 1n, '0x01'],
          [b, 2n, '0x02'],
        ],
      ],
    );
    expect(decodeAccountCalls(encode('execute(bytes32,bytes)', [mode('01'), batch]))).to.deep.equal([
      { target: a, value: 1n, data: '0x01' },
      { target: b, value: 2n, data: '0x02' },
    ]);
    expect(decodeAccountCalls(encode('execute(bytes32,bytes)', [mode('ff'), concat([b, '0xbeef'])]))).to.deep.equal([
      { target: b, value: 0n, data: '0xbeef' },
    ]);
  });

  it('unfolds an ERC-7579 delegatecall into MultiSendCallOnly into the transactions the account makes', () => {
    const mode = `0xff${'00'.repeat(31)}`;
    const packed = concat([
      '0x00',
      a,
      zeroPadValue(toBeHex(3n), 32),
      zeroPadValue(toBeHex(2n), 32),
      '0xbeef',
      '0x00',
      b,
      zeroPadValue('0x', 32),
      zeroPadValue('0x', 32),
    ]);
    const multiSend = new Interface(['function multiSend(bytes)']).encodeFunctionData('multiSend', [packed]);
    const multiSendCallOnly = addr(0x99);
    expect(decodeAccountCalls(encode('execute(bytes32,bytes)', [mode, concat([multiSendCallOnly, multiSend])]))).to.deep.equal([
      { target: a, value: 3n, data: '0xbeef' },
      { target: b, value: 0n, data: '0x' },
    ]);
    // A list that runs past its end is no MultiSend batch: the delegatecall itself is the call.
    const broken = `${multiSend.slice(0, -64)}`;
    expect(decodeAccountCalls(encode('execute(bytes32,bytes)', [mode, concat([multiSendCallOnly, broken])]))).to.deep.equal([
      { target: multiSendCallOnly, value: 0n, data: broken },
    ]);
  });

  it("decodes a Safe7579 account's first op: the launchpad's setupSafe(InitData), whose last field is the ERC-7579 execute the account runs", () => {
    const setupSafe = new Interface([
      'function setupSafe((address singleton, address[] owners, uint256 threshold, address setupTo, bytes setupData, address safe7579, (address module, bytes initData)[] validators, bytes callData) initData)',
    ]);
    const mode = (callType: string): string => `0x${callType}${'00'.repeat(31)}`;
    const run = (callData: string): string =>
      setupSafe.encodeFunctionData('setupSafe', [[b, [a, b], 1n, b, '0x1234', a, [[a, '0xabcd']], callData]]);
    const batch = abi.encode(
      ['(address,uint256,bytes)[]'],
      [
        [
          [a, 1n, '0x01'],
          [b, 0n, '0x'],
        ],
      ],
    );
    expect(run('0x').slice(0, 10)).to.equal('0xd9ed0e8f');
    expect(decodeAccountCalls(run(encode('execute(bytes32,bytes)', [mode('01'), batch])))).to.deep.equal([
      { target: a, value: 1n, data: '0x01' },
      { target: b, value: 0n, data: '0x' },
    ]);
    const single = concat([b, zeroPadValue(toBeHex(7n), 32), '0xcafe']);
    expect(decodeAccountCalls(run(encode('execute(bytes32,bytes)', [mode('00'), single])))).to.deep.equal([
      { target: b, value: 7n, data: '0xcafe' },
    ]);
    // Anything but an account method inside is no call the decoder can name.
    expect(decodeAccountCalls(run('0xdeadbeef'))).to.deep.equal([]);
  });

  it('decodes Kernel v2, the Safe 4337 module (a MultiSend delegatecall) and Biconomy v2', () => {
    expect(decodeAccountCalls(encode('execute(address,uint256,bytes,uint8)', [a, 1n, '0x01', 0]))).to.deep.equal([
      { target: a, value: 1n, data: '0x01' },
    ]);
    expect(decodeAccountCalls(encode('executeUserOp(address,uint256,bytes,uint8)', [b, 0n, '0x8d80ff0a', 1]))).to.deep.equal([
      { target: b, value: 0n, data: '0x8d80ff0a' },
    ]);
    expect(decodeAccountCalls(encode('execute_ncC(address,uint256,bytes)', [a, 2n, '0x']))).to.deep.equal([
      { target: a, value: 2n, data: '0x' },
    ]);
    expect(decodeAccountCalls(encode('executeBatch_y6U(address[],uint256[],bytes[])', [[a], [4n], ['0x04']]))).to.deep.equal([
      { target: a, value: 4n, data: '0x04' },
    ]);
  });

  it("unfolds a Safe batch (executeUserOp DELEGATECALL into MultiSend) into MultiSend's transactions", () => {
    const multiSend = new Interface(['function multiSend(bytes)']);
    const packed = concat([
      '0x00',
      a,
      zeroPadValue(toBeHex(3n), 32),
      zeroPadValue(toBeHex(2), 32),
      '0xabcd',
      '0x00',
      b,
      zeroPadValue(toBeHex(0n), 32),
      zeroPadValue(toBeHex(0), 32),
    ]);
    const batch = multiSend.encodeFunctionData('multiSend', [packed]);
    for (const sig of ['executeUserOp(address,uint256,bytes,uint8)', 'executeUserOpWithErrorString(address,uint256,bytes,uint8)']) {
      const safe = new Interface([`function ${sig}`]);
      expect(decodeAccountCalls(safe.encodeFunctionData(sig, [b, 0n, batch, 1])), sig).to.deep.equal([
        { target: a, value: 3n, data: '0xabcd' },
        { target: b, value: 0n, data: '0x' },
      ]);
      // A plain CALL to MultiSend is the one call it is; a truncated list falls back to the delegatecall.
      expect(decodeAccountCalls(safe.encodeFunctionData(sig, [b, 0n, batch, 0]))).to.deep.equal([{ target: b, value: 0n, data: batch }]);
      const truncated = multiSend.encodeFunctionData('multiSend', [packed.slice(0, -4)]);
      expect(decodeAccountCalls(safe.encodeFunctionData(sig, [b, 0n, truncated, 1]))).to.deep.equal([
        { target: b, value: 0n, data: truncated },
      ]);
    }
  });

  it('looks through the v0.7 executeUserOp wrapper (0x8dd7712f) at the call it carries', () => {
    const inner = encode('execute(address,uint256,bytes)', [a, 7n, '0x77']);
    expect(decodeAccountCalls(`0x8dd7712f${inner.slice(2)}`)).to.deep.equal([{ target: a, value: 7n, data: '0x77' }]);
  });

  it('answers no calls for an unknown selector or malformed arguments', () => {
    expect(decodeAccountCalls('0xdeadbeef0000')).to.deep.equal([]);
    expect(decodeAccountCalls('0xb61d27f6')).to.deep.equal([]);
    expect(decodeAccountCalls('0x')).to.deep.equal([]);
  });
});
