import { expect } from 'chai';
import { toJsonBody, withJsonText } from '../../shared/jsonText.js';

describe('jsonText: answers with parts whose JSON text is at hand', () => {
  const day = (n: number) =>
    withJsonText({ day: n, wallets: [`0x${n}`] }, () => [`{"day":${n},"wallets":`, Buffer.from(`["0x${n}"]`), ',"from":"text"}']);
  const toJsonText = (answer: unknown) => toJsonBody(answer).toString();

  it('writes each marked object as its text, wherever it sits and however often', () => {
    const a = day(1);
    const answer = { metrics: [a, day(2)], again: [a], note: 'x"y é€ 😀', n: null };
    expect(JSON.parse(toJsonText(answer))).to.deep.equal({
      metrics: [
        { day: 1, wallets: ['0x1'], from: 'text' },
        { day: 2, wallets: ['0x2'], from: 'text' },
      ],
      again: [{ day: 1, wallets: ['0x1'], from: 'text' }],
      note: 'x"y é€ 😀',
      n: null,
    });
  });

  it('is JSON.stringify for answers without marked parts', () => {
    const answer = { a: [1, 'two', { three: 3n.toString() }], b: '\u0000', c: undefined };
    expect(toJsonText(answer)).to.equal(JSON.stringify(answer));
  });

  it('leaves a marked object its plain value everywhere else', () => {
    const a = day(3);
    expect(JSON.parse(JSON.stringify({ a }))).to.deep.equal({ a: { day: 3, wallets: ['0x3'] } });
    expect({ ...a }).to.deep.equal({ day: 3, wallets: ['0x3'] });
    expect(Object.keys(a)).to.deep.equal(['day', 'wallets']);
    // A serialisation after an answer's: nothing left over from it.
    toJsonText({ a });
    expect(JSON.stringify(a)).to.equal('{"day":3,"wallets":["0x3"]}');
  });

  it('does not take a string that looks like a marked part for one', () => {
    const answer = { m: day(4), s: '\u0000jsonText:not-the-placeholder' };
    expect(JSON.parse(toJsonText(answer))).to.deep.equal({ m: { day: 4, wallets: ['0x4'], from: 'text' }, s: answer.s });
  });
});
