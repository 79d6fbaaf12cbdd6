/**
 * A bundle transaction's logs as stored (bundle_transactions.logs): packed and unpacked unchanged, and each
 * log's op derived by the one rule the indexer and the API share.
 */
import { expect } from 'chai';
import { logOwners, packLogs, unpackLogs, type TransactionLog } from '../../../shared/db/tables/logs.js';

const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

describe('packed transaction logs', () => {
  it('packs and unpacks logs of 0 to 4 topics and of empty, short and long data', () => {
    const logs: TransactionLog[] = [0, 1, 2, 3, 4].map((topicCount) => ({
      address: address(0xa0 + topicCount),
      topics: Array.from({ length: topicCount }, (_, i) => word(topicCount * 10 + i)),
      data: topicCount === 0 ? '0x' : `0x${'ab'.repeat(topicCount * 37)}`,
    }));
    logs.push({ address: address(0xff), topics: [word(1)], data: `0x${'cd'.repeat(70_000)}` });
    expect(unpackLogs(packLogs(logs))).to.deep.equal(logs);
  });

  it('packs each log as address, topic count, topics, data length (big-endian), data', () => {
    const packed = packLogs([{ address: address(1), topics: [word(2)], data: '0x0304' }]);
    expect(packed).to.equal(`0x${address(1).slice(2)}01${word(2).slice(2)}000000020304`);
  });

  it('packs no logs as no bytes', () => {
    expect(packLogs([])).to.equal('0x');
    expect(unpackLogs('0x')).to.deep.equal([]);
  });

  it('refuses a log it could not unpack the same (a topic of another length, five topics)', () => {
    expect(() => packLogs([{ address: address(1), topics: ['0x01'], data: '0x' }])).to.throw(/cannot be packed/);
    expect(() => packLogs([{ address: address(1), topics: [1, 2, 3, 4, 5].map(word), data: '0x' }])).to.throw(/cannot be packed/);
  });
});

describe('the op of each log (logOwners)', () => {
  const op = (n: number, logIndex: number, execLogFrom: number | null, execLogTo: number | null) => ({
    userOpHash: word(n),
    logIndex,
    execLogFrom,
    execLogTo,
  });

  it('gives each log the op whose execution slice holds it, inner ops first', () => {
    // Logs 10–19: 10 BeforeExecution; op 1 (event 18) executes 11–18 and, inside, a bundle whose
    // BeforeExecution is 11 and whose ops 2 (event 14, slice 12–14) and 3 (event 16, slice 15–16)
    // run; 19 is op 4's event, whose slice holds only it.
    const ops = [op(1, 18, 11, 19), op(4, 19, 19, 20), op(3, 16, 15, 17), op(2, 14, 12, 15)];
    expect(logOwners(ops, 10, 10)).to.deep.equal([null, word(1), word(2), word(2), word(2), word(3), word(3), word(1), word(1), word(4)]);
  });

  it('leaves logs outside every slice, and an op without a slice, to none', () => {
    expect(logOwners([op(1, 3, null, null), op(2, 6, 5, 7)], 2, 6)).to.deep.equal([null, null, null, word(2), word(2), null]);
  });

  it('keeps to the transaction: slices reaching past its logs claim only its own', () => {
    expect(logOwners([op(1, 30, 0, 31)], 28, 2)).to.deep.equal([word(1), word(1)]);
    expect(logOwners([op(1, 3, 0, 4)], 0, 0)).to.deep.equal([]);
  });
});
