import { expect } from 'chai';
import {
  bundleDetailsSchema,
  blockActivitySchema,
  logSchema,
  searchResultSchema,
  userOpMetadataSchema,
  userOpSchema,
} from '../../shared/models/index.js';
import { z } from 'zod';
import { expectedUserOp, newestFirst, pick } from './support/expected.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';

const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const userOpsBody = z.object({ userOps: z.array(userOpSchema) });

describe('user operation endpoints on indexed devnet traffic', () => {
  const d = useIndexedDevnet({ ops: 300, seed: 11 });

  it('getLatestUserOps pages through every op, newest first, as the truth has them', async () => {
    const expected = [...d.truth.userOps].sort(newestFirst);
    for (const [skip, first] of [
      [0, 10],
      [10, 25],
      [290, 100],
    ] as const) {
      const res = await d.get('getLatestUserOps', { network: 'devnet', first, skip });
      expect(res.status).to.equal(200);
      const { userOps } = userOpsBody.parse(res.body);
      const slice = expected.slice(skip, skip + first);
      expect(userOps.map((o) => o.userOpHash)).to.deep.equal(slice.map((o) => o.userOpHash));
      userOps.forEach((op, i) => expect(pick(op, expectedUserOp(d.truth, slice[i]!))).to.deep.equal(expectedUserOp(d.truth, slice[i]!)));
    }
  });

  it('getUserOp answers every kind of op (each EntryPoint, failed, sponsored, deploying) on any network spelling', async () => {
    const ops = d.truth.userOps;
    const picks = [
      ...['v0.6', 'v0.7', 'v0.8'].map((v) => ops.find((o) => o.entryPointVersion === v)),
      ops.find((o) => !o.success),
      ops.find((o) => !o.success && o.revertReason),
      ops.find((o) => o.paymaster),
      ops.find((o) => o.factory),
      ops.find((o) => o.calls.length > 1),
      ops.find((o) => o.bundleIndex > 0),
    ].filter((o) => o !== undefined);
    expect(picks.length).to.be.greaterThan(6);
    for (const op of picks) {
      for (const query of [{ hash: op.userOpHash }, { hash: op.userOpHash.toUpperCase().replace('0X', '0x'), network: 'Devnet' }]) {
        const res = await d.get('getUserOp', query);
        const { userOps } = userOpsBody.parse(res.body);
        expect(userOps).to.have.length(1);
        expect(pick(userOps[0]!, expectedUserOp(d.truth, op))).to.deep.equal(expectedUserOp(d.truth, op));
      }
    }
  });

  it('getUserOp answers an unknown hash with 200 and no ops', async () => {
    const res = await d.get('getUserOp', { hash: `0x${'0'.repeat(64)}` });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ userOps: [] });
  });

  it('getBundleActivity answers the bundle transaction: sender, status, fee and its ops', async () => {
    const multi = d.truth.bundles.find((b) => b.bundleIndex > 0) ?? d.truth.bundles[0]!;
    for (const bundle of [d.truth.bundles[0]!, multi]) {
      const inTx = d.truth.bundles.filter((b) => b.transactionHash === bundle.transactionHash);
      const ops = d.truth.userOps.filter((o) => o.transactionHash === bundle.transactionHash).sort(newestFirst);
      const res = await d.get('getBundleActivity', { bundle: bundle.transactionHash, network: 'devnet', first: 100 });
      const body = z.object({ bundleDetails: bundleDetailsSchema }).parse(res.body).bundleDetails;
      expect(body).to.deep.include({
        transactionHash: bundle.transactionHash,
        network: 'devnet',
        userOpsLength: String(inTx.reduce((n, b) => n + b.userOpHashes.length, 0)),
        blockNumber: String(bundle.blockNumber),
        blockTime: String(bundle.blockTime),
        from: bundle.bundler,
        status: bundle.success ? '1' : '0',
        transactionFee: bundle.transactionFee,
      });
      expect(body.userOps.map((o) => o.userOpHash)).to.deep.equal(ops.map((o) => o.userOpHash));
    }
  });

  it('getBundleActivity answers a transaction not indexed yet with no ops (clients poll)', async () => {
    const res = await d.get('getBundleActivity', { bundle: `0x${'ab'.repeat(32)}`, network: 'devnet' });
    expect(res.status).to.equal(200);
    expect(res.body.bundleDetails).to.deep.include({ userOps: [], userOpsLength: '0', blockNumber: null, status: null });
  });

  it('getBlockActivity answers the ops of a block, newest first', async () => {
    const block = d.truth.userOps[d.truth.userOps.length - 1]!.blockNumber;
    const ops = d.truth.userOps.filter((o) => o.blockNumber === block).sort(newestFirst);
    const res = await d.get('getBlockActivity', { blockNumber: block, network: 'devnet', first: 100 });
    const body = z.object({ block: blockActivitySchema }).parse(res.body).block;
    expect(body).to.deep.include({ blockNumber: String(block), userOpsLength: String(ops.length), blockTime: String(ops[0]!.blockTime) });
    expect(body.userOps.map((o) => o.userOpHash)).to.deep.equal(ops.map((o) => o.userOpHash));
  });

  it('getUserOpMetadata answers the ERC-20 transfers, positional params and decoded logs of an op', async () => {
    for (const version of ['v0.6', 'v0.7']) {
      const transfer = d.truth.transfers.find(
        (t) => t.standard === 'ERC20' && d.truth.userOps.find((o) => o.userOpHash === t.userOpHash)?.entryPointVersion === version,
      )!;
      const op = d.truth.userOps.find((o) => o.userOpHash === transfer.userOpHash)!;
      const res = await d.get('getUserOpMetadata', { userOpHash: op.userOpHash, network: 'devnet' });
      const body = userOpMetadataSchema.parse(res.body);
      const erc20 = d.truth.transfers.filter((t) => t.userOpHash === op.userOpHash && t.standard === 'ERC20');
      expect(body.erc20Transfers.map((t) => [t.invoked, t.from, t.to, BigInt(t.value).toString()])).to.deep.equal(
        erc20.map((t) => [t.token, t.from, t.to, t.value]),
      );
      const params = body.userOpParams;
      expect(params[0]).to.equal(op.sender);
      expect(BigInt((params[1] as { hex: string }).hex).toString()).to.equal(op.nonce);
      expect(params[2]).to.equal(op.initCode);
      expect(params[3]).to.equal(op.callData);
      if (version === 'v0.6') {
        expect(params).to.have.length(11);
        expect(BigInt((params[4] as { hex: string }).hex).toString()).to.equal(op.callGasLimit);
        expect(params[9]).to.equal(op.paymasterAndData);
        expect(params[10]).to.equal(op.signature);
      } else {
        expect(params).to.have.length(9);
        expect(BigInt((params[5] as { hex: string }).hex).toString()).to.equal(op.preVerificationGas);
        expect(params[7]).to.equal(op.paymasterAndData);
        expect(params[8]).to.equal(op.signature);
      }
      const transfers = body.logs.filter((l) => l.name === 'Transfer');
      expect(transfers.length).to.be.at.least(erc20.length);
      expect(transfers[0]!.inputs!.map((i) => i.name)).to.include.members(['from', 'to']);
    }
  });

  it("getUserOpMetadata answers the execution trace down to the op's calls", async () => {
    const op = d.truth.userOps.find((o) => o.success && o.calls.length > 0)!;
    const res = await d.get('getUserOpMetadata', { userOpHash: op.userOpHash, network: 'devnet' });
    const trace = userOpMetadataSchema.parse(res.body).executionTrace;
    expect(trace, 'traced on the devnet node on first request').to.not.equal(null);
    expect(trace!.traceData.executionCall).to.equal(true);
    const frames: string[] = [];
    const walk = (node: NonNullable<typeof trace>): void => {
      frames.push(node.traceData.to);
      node.next.forEach(walk);
    };
    walk(trace!);
    expect(frames).to.include(op.calls[0]!.target);
  });

  it('getUserOpLogs answers the logs of an op, with the token transfers the truth records', async () => {
    const transfer = d.truth.transfers.find((t) => t.standard === 'ERC20' && t.logIndex !== null)!;
    const res = await d.get('getUserOpLogs', { userOpHash: transfer.userOpHash, network: 'devnet' });
    const { logs } = z.object({ logs: z.array(logSchema) }).parse(res.body);
    const log = logs.find((l) => l.logIndex === String(transfer.logIndex))!;
    expect(log).to.deep.include({
      transactionHash: transfer.transactionHash,
      address: transfer.token,
      event_name: 'Transfer',
      removed: false,
    });
    expect(log.topics[0]).to.equal(TRANSFER_TOPIC);
    expect(logs.map((l) => Number(l.logIndex))).to.deep.equal([...logs.map((l) => Number(l.logIndex))].sort((a, b) => a - b));
  });

  it('getLogFromIndex answers one log, and 404 for a missing one', async () => {
    const transfer = d.truth.transfers.find((t) => t.standard === 'ERC721' && t.logIndex !== null)!;
    const res = await d.get('getLogFromIndex', {
      transactionHash: transfer.transactionHash,
      logIndex: transfer.logIndex!,
      network: 'devnet',
    });
    const { log } = z.object({ log: logSchema }).parse(res.body);
    expect(log).to.deep.include({ address: transfer.token, eventName: 'Transfer', logIndex: String(transfer.logIndex) });
    expect(BigInt(log.topics[3]!).toString()).to.equal(transfer.tokenId);
    const missing = await d.get('getLogFromIndex', { transactionHash: transfer.transactionHash, logIndex: 100_000, network: 'devnet' });
    expect(missing.status).to.equal(404);
    expect(missing.body).to.include({ code: 'NOT_FOUND', param: 'logIndex' });
  });

  it('answers 404 for the metadata and logs of an unknown op', async () => {
    for (const name of ['getUserOpMetadata', 'getUserOpLogs']) {
      const res = await d.get(name, { userOpHash: `0x${'1'.repeat(64)}`, network: 'devnet' });
      expect(res.status).to.equal(404);
      expect(res.body).to.include({ code: 'NOT_FOUND', param: 'userOpHash' });
    }
  });

  it('searchEntry tells what a term is, without a key', async () => {
    const op = d.truth.userOps.find((o) => o.paymaster)!;
    const account = d.truth.accounts[0]!;
    const cases: Array<[string, string]> = [
      [op.userOpHash, 'userOpHash'],
      [op.transactionHash, 'bundle'],
      [op.sender, 'account'],
      [op.paymaster!, 'paymaster'],
      [op.bundler, 'bundler'],
      [account.factory, 'factory'],
      [String(op.blockNumber), 'block'],
    ];
    for (const [entry, type] of cases) {
      const res = await d
        .api()
        .get('/v0/searchEntry')
        .query({ entry: entry.toUpperCase().replace('0X', '0x') });
      const body = searchResultSchema.parse(res.body);
      expect(body).to.deep.include({ foundInNetwork: 'devnet', type, term: entry });
    }
    const none = await d
      .api()
      .get('/v0/searchEntry')
      .query({ entry: `0x${'5'.repeat(40)}`, network: 'devnet' });
    expect(none.status).to.equal(404);
    expect(none.body.message).to.be.a('string');
  });
});
