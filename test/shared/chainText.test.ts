/** The rule for text from the chain (shared/chainText.ts), checked against the store that must hold it. */
import { expect } from 'chai';
import { CHAIN_TEXT_MAX_CHARS, storableJson, storableText, storableTextFromUtf8 } from '../../shared/chainText.js';
import { useTestDb } from '../helpers/db.js';

describe('shared/chainText', () => {
  const t = useTestDb();

  it('removes NUL, replaces bytes that are not UTF-8 and lone surrogates with U+FFFD, keeps everything else', () => {
    expect(storableText('H\u0000X')).to.equal('HX');
    expect(storableText('emoji 🦄\ttab\nnewline\r\u0001')).to.equal('emoji 🦄\ttab\nnewline\r\u0001');
    expect(storableText('lone \ud800 and \udc00, paired 🦄')).to.equal('lone \ufffd and \ufffd, paired 🦄');
    expect(storableTextFromUtf8('0xc328ff00')).to.equal('\ufffd(\ufffd');
    expect(storableTextFromUtf8(Buffer.from('MKR\u0000\u0000\u0000'))).to.equal('MKR');
  });

  it(`keeps at most ${CHAIN_TEXT_MAX_CHARS} characters, never half a surrogate pair`, () => {
    expect(storableText('x'.repeat(CHAIN_TEXT_MAX_CHARS + 5))).to.equal('x'.repeat(CHAIN_TEXT_MAX_CHARS));
    const cutInPair = `${'x'.repeat(CHAIN_TEXT_MAX_CHARS - 1)}🦄`;
    expect(storableText(cutInPair)).to.equal('x'.repeat(CHAIN_TEXT_MAX_CHARS - 1));
  });

  it('makes text and JSON the store accepts, and reads them back as the rule says', async () => {
    const hostile = 'a\u0000b \ud800 🦄\t';
    const { rows } = await t.db.query<{ text: string; json: { error: string; input: string } }>(
      `select $1::text as text, $2::jsonb as json`,
      [storableText(hostile), storableJson({ error: hostile, input: `0x${'ab'.repeat(CHAIN_TEXT_MAX_CHARS)}` })],
    );
    expect(rows[0]!.text).to.equal('ab \ufffd 🦄\t');
    // Strings inside JSON are not cut: a frame's input is long hex.
    expect(rows[0]!.json).to.deep.equal({ error: 'ab \ufffd 🦄\t', input: `0x${'ab'.repeat(CHAIN_TEXT_MAX_CHARS)}` });
    await t.db.query(`select $1::jsonb`, [JSON.stringify({ error: hostile })]).then(
      () => expect.fail('the store takes a NUL in JSON'),
      (err: Error) => expect(err.message).to.match(/unicode|\\u0000|escape/i),
    );
  });
});
