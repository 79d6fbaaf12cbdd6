/** Revert messages (edge cases 10 and 14): Error(string), Panic, custom errors, ExecuteError, truncation. */
import { expect } from 'chai';
import { AbiCoder, id } from 'ethers';
import { decodeRevertMessage } from '../../../indexer/decode/revertReason.js';

const abi = AbiCoder.defaultAbiCoder();
const errorString = (s: string): string => id('Error(string)').slice(0, 10) + abi.encode(['string'], [s]).slice(2);
const panic = (code: number): string => id('Panic(uint256)').slice(0, 10) + abi.encode(['uint256'], [code]).slice(2);
const executeError = (i: number, inner: string): string =>
  id('ExecuteError(uint256,bytes)').slice(0, 10) + abi.encode(['uint256', 'bytes'], [i, inner]).slice(2);

describe('decode/revertReason', () => {
  it('decodes Error(string) and Panic(uint256)', () => {
    expect(decodeRevertMessage(errorString('insufficient balance'))).to.equal('insufficient balance');
    expect(decodeRevertMessage(panic(0x11))).to.equal('Panic(0x11): arithmetic overflow or underflow');
  });

  it('reads Error(string) as ethers does: multi-byte UTF-8, empty, long', () => {
    for (const text of ['', 'héllo wörld ✓ 🚀', 'AA25 invalid account nonce', 'y'.repeat(500)]) {
      const data = errorString(text);
      expect(decodeRevertMessage(data)).to.equal(abi.decode(['string'], `0x${data.slice(10)}`)[0]);
    }
    // Not hex where the offset should be: nothing readable survives.
    expect(decodeRevertMessage(`${id('Error(string)').slice(0, 10)}${'00'.repeat(31)}zz`)).to.equal(null);
  });

  it('keeps a hostile Error(string) as storable text: NUL removed, bytes that are not UTF-8 as U+FFFD, 10,000 characters at most', () => {
    expect(decodeRevertMessage(errorString('H\u0000X'))).to.equal('HX');
    const notUtf8 = `${id('Error(string)').slice(0, 10)}${abi.encode(['bytes'], ['0xc328ff']).slice(2)}`;
    expect(decodeRevertMessage(notUtf8)).to.equal('\ufffd(\ufffd');
    expect(decodeRevertMessage(errorString('z'.repeat(12_000)))).to.equal('z'.repeat(10_000));
  });

  it('unwraps v0.8 ExecuteError(index, inner), nested', () => {
    expect(decodeRevertMessage(executeError(1, errorString('nope')))).to.equal('call 1 reverted: nope');
    expect(decodeRevertMessage(executeError(0, executeError(2, panic(1))))).to.equal(
      'call 0 reverted: call 2 reverted: Panic(0x01): assertion failed',
    );
  });

  it('names a custom error by its selector and has no message for empty data', () => {
    expect(decodeRevertMessage(`${id('Unauthorized(address)').slice(0, 10)}${'00'.repeat(32)}`)).to.equal(
      `custom error ${id('Unauthorized(address)').slice(0, 10)}`,
    );
    expect(decodeRevertMessage('0x')).to.equal(null);
    expect(decodeRevertMessage(null)).to.equal(null);
  });

  it('survives a reason cut at 2048 bytes (v0.7+ REVERT_REASON_MAX_LEN)', () => {
    const full = errorString('x'.repeat(3000));
    const cut = full.slice(0, 2 + 2048 * 2);
    expect(decodeRevertMessage(cut)).to.equal(`${'x'.repeat(2048 - 4 - 64)}… (truncated)`);
  });
});
