/**
 * POST /rpc/<network>: the ERC-4337 read methods answered from the index of a devnet's generated
 * traffic, checked against the chain (each op's receipt is the node's, field by field) and the
 * generator's truth; the key, scope, rate and batch rules; JSON-RPC's errors; forwarding without a
 * reachable bundler. What real clients and a real bundler see is in rpcRealClients.test.ts.
 */
import { expect } from 'chai';
import request from 'supertest';
import { generateApiKey } from '../../shared/apiKeys.js';
import * as apiKeys from '../../shared/db/tables/apiKeys.js';
import { createApp } from '../../server/app.js';
import { MAX_RPC_BATCH } from '../../server/rpc/routes.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { reorg } from '../../devnet/reorg.js';
import { createIndexerView } from '../../server/indexerView.js';
import { startDevnetIndexer, useIndexedDevnet } from './support/indexedDevnet.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Addresses are checksummed in answers and lower-case from the node: compared without case. */
const lower = (value: unknown): unknown => JSON.parse(JSON.stringify(value).toLowerCase());

const call = (method: string, params: unknown[] = [], id: number | string = 1) => ({ jsonrpc: '2.0', id, method, params });

describe('ERC-4337 RPC at /rpc/<network>', function () {
  this.timeout(120_000);
  const d = useIndexedDevnet({ ops: 40, days: 1, seed: 5 });
  const rpc = (body: unknown, key = d.key) =>
    d.api().post('/rpc/devnet').set('x-api-key', key).set('content-type', 'application/json').send(JSON.stringify(body));
  const nodeCall = async (method: string, params: unknown[]) => {
    const res = await fetch(d.devnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return ((await res.json()) as { result: Json }).result;
  };

  describe('answers from the index', () => {
    it("eth_getUserOperationReceipt: every op's receipt is the node's, its fields its event's, its logs cut before it", async () => {
      for (const op of d.truth.userOps) {
        const res = await rpc(call('eth_getUserOperationReceipt', [op.userOpHash]));
        expect(res.status, op.userOpHash).to.equal(200);
        const got = res.body.result as Json;
        const node = await nodeCall('eth_getTransactionReceipt', [op.transactionHash]);
        expect(lower(got.receipt), `${op.userOpHash}: receipt`).to.deep.equal(lower(node));
        expect(got).to.include({ userOpHash: op.userOpHash, success: op.success });
        expect(got.sender.toLowerCase()).to.equal(op.sender);
        expect(got.entryPoint.toLowerCase()).to.equal(op.entryPoint);
        expect(BigInt(got.nonce)).to.equal(BigInt(op.nonce));
        expect(BigInt(got.actualGasCost)).to.equal(BigInt(op.actualGasCost));
        expect(BigInt(got.actualGasUsed)).to.equal(BigInt(op.actualGasUsed));
        expect(got.paymaster?.toLowerCase() ?? null).to.equal(op.paymaster);
        expect(got.reason ?? null).to.equal(op.revertReason);
        // The op's own logs end right before its UserOperationEvent.
        const eventAt = (got.receipt.logs as Json[]).findIndex((l) => Number(l.logIndex) === op.logIndex);
        const own = got.logs as Json[];
        if (own.length > 0) expect(Number(own.at(-1)!.logIndex), op.userOpHash).to.equal(op.logIndex - 1);
        expect(eventAt).to.be.greaterThan(-1);
        expect(got.nonce).to.match(/^0x(0|[1-9a-f][0-9a-f]*)$/);
      }
    });

    it('eth_getUserOperationByHash: the op in its version’s RPC form, nested under userOperation, with its inclusion', async () => {
      for (const op of d.truth.userOps) {
        const { body } = await rpc(call('eth_getUserOperationByHash', [op.userOpHash]));
        const got = body.result as Json;
        expect(got.transactionHash).to.equal(op.transactionHash);
        expect(got.blockNumber).to.equal(`0x${op.blockNumber.toString(16)}`);
        expect(got.entryPoint.toLowerCase()).to.equal(op.entryPoint);
        const u = got.userOperation as Json;
        expect(u.sender.toLowerCase()).to.equal(op.sender);
        expect(u.callData).to.equal(op.callData);
        expect(u.signature).to.equal(op.signature);
        expect(BigInt(u.callGasLimit)).to.equal(BigInt(op.callGasLimit));
        expect(BigInt(u.maxFeePerGas)).to.equal(BigInt(op.maxFeePerGas));
        if (op.entryPointVersion === 'v0.6') {
          expect(u).to.include({ initCode: op.initCode, paymasterAndData: op.paymasterAndData });
        } else {
          expect(u).to.not.have.any.keys('initCode', 'paymasterAndData');
          const initCode = u.factory ? `${u.factory}${(u.factoryData ?? '0x').slice(2)}`.toLowerCase() : '0x';
          expect(initCode, op.userOpHash).to.equal(op.initCode);
          expect(u.paymaster?.toLowerCase() ?? null).to.equal(op.paymaster);
        }
      }
    });

    it('null for a hash it does not hold; eth_chainId and eth_supportedEntryPoints from the configuration', async () => {
      const unknown = `0x${'ab'.repeat(32)}`;
      const { body } = await rpc([
        call('eth_getUserOperationReceipt', [unknown], 1),
        call('eth_getUserOperationByHash', [unknown], 2),
        call('eth_chainId', [], 3),
        call('eth_supportedEntryPoints', [], 4),
      ]);
      expect(body.map((b: Json) => b.id)).to.deep.equal([1, 2, 3, 4]);
      expect(body[0].result).to.equal(null);
      expect(body[1].result).to.equal(null);
      expect(body[2].result).to.equal(`0x${d.truth.chainId.toString(16)}`);
      const entryPoints = (body[3].result as string[]).map((a) => a.toLowerCase());
      for (const address of Object.values(d.truth.entryPoints)) expect(entryPoints).to.include(address);
    });
  });

  describe('keys, scopes and limits', () => {
    it('takes the key from the apikey query parameter or x-api-key; 401 without one, 403 for a wrong one, no data', async () => {
      const hash = d.truth.userOps[0]!.userOpHash;
      const body = JSON.stringify(call('eth_getUserOperationReceipt', [hash]));
      const byQuery = await d.api().post(`/rpc/devnet?apikey=${d.key}`).set('content-type', 'application/json').send(body);
      expect(byQuery.body.result.userOpHash).to.equal(hash);
      const none = await d.api().post('/rpc/devnet').set('content-type', 'application/json').send(body);
      expect(none.status).to.equal(401);
      expect(none.body).to.not.have.property('result');
      expect(none.body.error.code).to.equal(-32001);
      const wrong = await d.api().post('/rpc/devnet?apikey=ops_wrong').set('content-type', 'application/json').send(body);
      expect(wrong.status).to.equal(403);
      expect(JSON.stringify(wrong.body)).to.not.include(hash.slice(2, 20));
    });

    it('a key without the rpc scope is refused (403); 404 for a network not served', async () => {
      const { key, prefix, hash } = generateApiKey();
      await apiKeys.insert(d.db, { prefix, hash, name: 'read-only', rateLimitPerSecond: null, scopes: ['read'] });
      const res = await rpc(call('eth_chainId'), key);
      expect(res.status).to.equal(403);
      expect(res.body.error.message).to.include('"rpc" scope');
      const elsewhere = await d
        .api()
        .post('/rpc/nowhere')
        .set('x-api-key', d.key)
        .send(JSON.stringify(call('eth_chainId')));
      expect(elsewhere.status).to.equal(404);
      expect(elsewhere.body.error.message).to.include('nowhere');
    });

    it("counts each item of a batch against the key's rate: past it an item is -32005, a lone request a 429 with Retry-After", async () => {
      // 1 a second with a burst reserve: a bucket of 3.
      const key = await createTestKey(d.db, 'slow', 1);
      const { body } = await rpc(
        Array.from({ length: 8 }, (_, i) => call('eth_chainId', [], i)),
        key,
      );
      expect(body.filter((b: Json) => b.result).length).to.be.within(3, 4);
      expect(body.filter((b: Json) => b.error?.code === -32005).length).to.be.within(4, 5);
      const lone = await rpc(call('eth_chainId'), key);
      expect(lone.status).to.equal(429);
      expect(lone.headers['retry-after']).to.match(/^\d+$/);
      expect(lone.body.error.code).to.equal(-32005);
    });
  });

  describe("JSON-RPC's errors", () => {
    it('-32700 for a body that is not JSON, -32600 for malformed requests and batches, in order with the good ones', async () => {
      const notJson = await d.api().post('/rpc/devnet').set('x-api-key', d.key).set('content-type', 'application/json').send('{"jsonrpc":');
      expect(notJson.body.error.code).to.equal(-32700);
      expect((await rpc([])).body.error.code).to.equal(-32600);
      const tooMany = await rpc(Array.from({ length: MAX_RPC_BATCH + 1 }, (_, i) => call('eth_chainId', [], i)));
      expect(tooMany.body.error).to.include({ code: -32600 });
      expect(tooMany.body.error.message).to.include(`at most ${MAX_RPC_BATCH}`);
      const { body } = await rpc([
        5,
        { jsonrpc: '1.0', id: 7, method: 'eth_chainId' },
        { jsonrpc: '2.0', id: 8 },
        call('eth_chainId', [], 9),
      ]);
      expect(body.map((b: Json) => [b.id, b.error?.code ?? 'ok'])).to.deep.equal([
        [null, -32600],
        [7, -32600],
        [8, -32600],
        [9, 'ok'],
      ]);
    });

    it('-32602 naming the bad parameter; -32601 for other methods without a bundler; a notification is answered with nothing', async () => {
      const bad = await rpc(call('eth_getUserOperationReceipt', ['0x1234']));
      expect(bad.body.error.code).to.equal(-32602);
      expect(bad.body.error.message).to.include('params[0] (userOpHash)');
      const extra = await rpc(call('eth_chainId', [1]));
      expect(extra.body.error.code).to.equal(-32602);
      const send = await rpc(call('eth_sendUserOperation', [{}, d.truth.entryPoints['v0.7']]));
      expect(send.body.error.code).to.equal(-32601);
      const notification = await rpc({ jsonrpc: '2.0', method: 'eth_chainId' });
      expect(notification.status).to.equal(204);
    });

    it('-32603 when the bundler cannot be reached, and its URL (with its key) appears nowhere', async () => {
      const secret = 'provider-secret-4337';
      const deps = testDeps(d.db, { BUNDLER_URL_DEVNET: `http://127.0.0.1:9/v2/${secret}?token=${secret}` });
      try {
        const app = createApp(deps);
        const post = (body: unknown) =>
          request(app).post('/rpc/devnet').set('x-api-key', d.key).set('content-type', 'application/json').send(JSON.stringify(body));
        const { body } = await post([
          call('eth_estimateUserOperationGas', [{}, d.truth.entryPoints['v0.7']], 1),
          call('eth_getUserOperationReceipt', [`0x${'cd'.repeat(32)}`], 2),
        ]);
        expect(body[0].error.code).to.equal(-32603);
        expect(body[0].error.message).to.equal('The bundler could not be reached');
        // An op not indexed is asked of the bundler; unreachable, the index's null stands (a wallet polls on).
        expect(body[1]).to.deep.equal({ jsonrpc: '2.0', id: 2, result: null });
        expect(JSON.stringify(body)).to.not.include(secret).and.not.include('127.0.0.1:9');
        // An indexed op is answered without the bundler.
        const indexed = await post(call('eth_getUserOperationReceipt', [d.truth.userOps[0]!.userOpHash]));
        expect(indexed.body.result.userOpHash).to.equal(d.truth.userOps[0]!.userOpHash);
      } finally {
        await deps.services.close();
      }
    });
  });

  // Last: it changes the chain.
  describe('a reorg', () => {
    it('an op it removed answers null, one it moved its new inclusion, once indexed (through the cache)', async () => {
      // Blocks within 10 of the head are not final: their answers are cached only until the reorg epoch moves.
      const deps = testDeps(d.db, { FINALITY_DEPTH_DEVNET: '10' });
      deps.services.indexer = createIndexerView(deps.db, deps.config.networks, { log: deps.log, maxAgeMs: 0 });
      const app = createApp(deps);
      const post = (body: unknown) =>
        request(app).post('/rpc/devnet').set('x-api-key', d.key).set('content-type', 'application/json').send(JSON.stringify(body));
      try {
        const head = Number(await nodeCall('eth_blockNumber', []));
        const recent = d.truth.userOps.filter((op) => op.blockNumber > head - 3);
        for (const op of recent) expect((await post(call('eth_getUserOperationReceipt', [op.userOpHash]))).body.result).to.not.equal(null);
        const result = await reorg(d.devnet, 3, { seed: 3 });
        const indexer = startDevnetIndexer(d.db, d.devnet.rpcUrl);
        try {
          await indexer.syncNow();
        } finally {
          await indexer.stop();
        }
        expect(result.removedUserOpHashes.length + result.movedUserOpHashes.length).to.be.greaterThan(0);
        for (const hash of result.removedUserOpHashes) {
          for (const method of ['eth_getUserOperationReceipt', 'eth_getUserOperationByHash']) {
            expect((await post(call(method, [hash]))).body.result, `${method} ${hash}`).to.equal(null);
          }
        }
        for (const hash of [...result.movedUserOpHashes, ...result.newUserOpHashes]) {
          const got = (await post(call('eth_getUserOperationReceipt', [hash]))).body.result as Json;
          const node = await nodeCall('eth_getTransactionReceipt', [got.receipt.transactionHash]);
          expect(node.blockHash, hash).to.equal(got.receipt.blockHash);
          expect(result.newBlocks.map((b) => b.hash)).to.include(got.receipt.blockHash);
          expect(lower(got.receipt), hash).to.deep.equal(lower(node));
          const byHash = (await post(call('eth_getUserOperationByHash', [hash]))).body.result as Json;
          expect([byHash.transactionHash, byHash.blockHash]).to.deep.equal([got.receipt.transactionHash, got.receipt.blockHash]);
        }
      } finally {
        await deps.services.close();
      }
    });
  });
});
