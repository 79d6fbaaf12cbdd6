/**
 * eth_getLogs range adaptation (edge case 33): provider refusals are recognised by message, a
 * suggested range is used when given, the range halves otherwise, grows back ×1.05 on success and
 * shrinks when answers hold more logs than a batch should.
 */
import { expect } from 'chai';
import { LogRangeEstimator } from '../../../indexer/sync/fetchLogs.js';
import {
  isBatchLimitError,
  isBatchUnsupported,
  isLogRangeError,
  isUnsupported,
  suggestedRangeSize,
} from '../../../indexer/sync/rpcErrors.js';

describe('sync/rpcErrors', () => {
  const refusals: Array<[string, number, string, number | null]> = [
    [
      'Alchemy',
      -32602,
      'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x10a9d00, 0x10aa4cf]',
      2000,
    ],
    ['Infura', -32005, 'query returned more than 10000 results. Try with this block range [0x10A9D00, 0x10AA0F3].', 1012],
    ['Infura (range cap)', -32005, 'range 20000 exceeds limit of 10000', 10000],
    ['QuickNode', -32614, 'eth_getLogs is limited to a 10,000 range', 10000],
    ['QuickNode (digits)', -32614, 'eth_getLogs is limited to a 10000 range', 10000],
    ['Ankr', -32600, 'block range is too wide', null],
    ['Chainstack', -32000, 'Block range limit exceeded.', null],
    ['Arbitrum', -32000, 'logs matched by query exceeds limit of 10000', null],
    ['zkEVM', -32000, 'query returned more than 10000 results', null],
    ['Cloudflare', -32000, 'Max range: 3500', 3500],
    ['Avalanche', -32000, 'requested too many blocks from 0 to 5000, maximum is set to 2048', 2048],
    ['generic', -32005, 'too many results', null],
  ];
  for (const [provider, code, message, suggested] of refusals) {
    it(`recognises a ${provider} range refusal`, () => {
      expect(isLogRangeError({ code, message }), message).to.equal(true);
      expect(suggestedRangeSize(message)).to.equal(suggested);
    });
  }

  it('does not take other failures for range refusals', () => {
    expect(isLogRangeError({ code: -32603, message: 'internal error' })).to.equal(false);
    expect(isLogRangeError({ code: -32000, message: 'header not found' })).to.equal(false);
  });

  it('recognises unsupported methods and batch-size refusals', () => {
    expect(isUnsupported({ code: -32601, message: 'the method debug_traceTransaction does not exist/is not available' })).to.equal(true);
    expect(isUnsupported({ code: -32000, message: 'Method not found' })).to.equal(true);
    expect(isBatchLimitError({ code: -32014, message: 'x' })).to.equal(true);
    expect(isBatchLimitError({ code: -32000, message: 'batch size too large' })).to.equal(true);
    expect(isBatchLimitError({ code: -32603, message: 'internal error' })).to.equal(false);
    expect(isBatchUnsupported({ code: -32600, message: 'batch requests are not supported' })).to.equal(true);
    expect(isBatchUnsupported({ code: -32600, message: 'Batch requests are not allowed' })).to.equal(true);
    expect(isBatchUnsupported({ code: -32014, message: 'batch size too large: max 25' })).to.equal(false);
  });
});

describe('sync/LogRangeEstimator', () => {
  it('uses a suggested range, halves without one, and grows back (×2 while sparse, ×1.05 near the target)', () => {
    const e = new LogRangeEstimator({ initialRange: 1000, maxRange: 5000, targetLogs: 1000 });
    e.onRefused(1000, 300);
    expect(e.size).to.equal(300);
    e.onRefused(300, null);
    expect(e.size).to.equal(150);
    e.onSuccess(150, 600);
    expect(e.size).to.equal(158);
    e.onSuccess(158, 10);
    expect(e.size).to.equal(317);
    for (let i = 0; i < 20; i++) e.onSuccess(e.size, 10);
    expect(e.size).to.equal(5000);
    e.onSuccess(20, 0);
    expect(e.size, 'a short range changes nothing').to.equal(5000);
  });

  it('shrinks when an answer holds more logs than a batch should', () => {
    const e = new LogRangeEstimator({ initialRange: 1000, targetLogs: 2000 });
    e.onSuccess(1000, 8000);
    expect(e.size).to.equal(250);
  });
});
