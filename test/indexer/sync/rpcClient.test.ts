/**
 * How RpcClient reads an answer's bytes: a node's answers are ASCII (hex) but for the odd text a
 * provider writes itself (a revert reason, a localized error message), which must arrive intact
 * whatever way the body was cut into packets. And what its HTTP exchange does with a provider
 * that never answers, cuts an answer off, or refuses calls for their pace. A local HTTP server stands
 * in for such a provider.
 */
import { expect } from 'chai';
import { getEventListeners } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RpcClient } from '../../../indexer/sync/rpcClient.js';
import { RpcCallError } from '../../../indexer/sync/rpcErrors.js';
import { quietLogger } from '../support.js';

/** A JSON-RPC endpoint answering every call with `answer(method)`, the body sent in two writes cut at `cutAt` bytes. */
async function startProvider(answer: (method: string) => object, cutAt: number): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      const calls = JSON.parse(text) as { id: number; method: string } | Array<{ id: number; method: string }>;
      const reply = Array.isArray(calls)
        ? calls.map((c) => ({ jsonrpc: '2.0', id: c.id, ...answer(c.method) }))
        : { jsonrpc: '2.0', id: calls.id, ...answer(calls.method) };
      const body = Buffer.from(JSON.stringify(reply));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(body.subarray(0, cutAt));
      setTimeout(() => res.end(body.subarray(cutAt)), 5);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('sync/RpcClient answers', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));
  const client = async (answer: (method: string) => object, cutAt: number) => {
    const { url, server } = await startProvider(answer, cutAt);
    servers.push(server);
    return new RpcClient({ urls: [url], log: quietLogger(), retries: 0 });
  };

  it('reads an ASCII answer as it was sent', async () => {
    const rpc = await client(() => ({ result: '0x' + 'ab'.repeat(5000) }), 100);
    expect(
      await rpc.batch([
        { method: 'eth_getCode', params: [] },
        { method: 'eth_getCode', params: [] },
      ]),
    ).to.deep.equal(['0x' + 'ab'.repeat(5000), '0x' + 'ab'.repeat(5000)]);
  });

  it('reads text beyond ASCII whole, even when a character is split between two packets', async () => {
    const text = 'añadir ✓ 🚀';
    // `{"jsonrpc":"2.0","id":1,"result":"añ` ends 2 bytes into the answer's text: cut inside the ñ (2 bytes in UTF-8).
    const cut = Buffer.byteLength('{"jsonrpc":"2.0","id":1,"result":"a') + 1;
    const rpc = await client(() => ({ result: text }), cut);
    expect(await rpc.call('web3_clientVersion', [])).to.equal(text);
  });

  it('keeps a provider’s error message beyond ASCII intact', async () => {
    const rpc = await client(() => ({ error: { code: 3, message: 'execution reverted: sólo el dueño ✗' } }), 40);
    const err = await rpc.call('eth_call', []).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(RpcCallError);
    expect((err as RpcCallError).message).to.equal('eth_call: execution reverted: sólo el dueño ✗ (code 3)');
  });
});

describe('sync/RpcClient over HTTP', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));
  /** A provider whose first request gets `first(res)` and every later one its answer. */
  const provider = async (first: (res: ServerResponse) => void): Promise<string> => {
    let n = 0;
    const server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        if (++n === 1) return first(res);
        const calls = [JSON.parse(text)].flat() as Array<{ id: number }>;
        res.end(JSON.stringify(calls.map((c) => ({ jsonrpc: '2.0', id: c.id, result: '0x1' }))));
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  it('gives up on a provider that never answers after its timeout, and asks again', async () => {
    const url = await provider(() => undefined);
    const rpc = new RpcClient({ urls: [url], log: quietLogger(), timeoutMs: 200, minRetryDelayMs: 1 });
    const started = performance.now();
    expect(await rpc.call('eth_chainId', [])).to.equal('0x1');
    expect(performance.now() - started).to.be.within(190, 3_000);
    expect(rpc.stats).to.include({ httpRequests: 2, failedHttpRequests: 1 });
  });

  it('asks again when an answer is cut off mid-body', async () => {
    const url = await provider((res) => {
      res.writeHead(200, { 'content-length': '1000' });
      res.write('[{"jsonrpc":"2.0"');
      setTimeout(() => res.destroy(), 10);
    });
    const rpc = new RpcClient({ urls: [url], log: quietLogger(), minRetryDelayMs: 1 });
    expect(await rpc.call('eth_chainId', [])).to.equal('0x1');
    expect(rpc.stats).to.include({ httpRequests: 2, failedHttpRequests: 1 });
  });

  it('takes a 429 for a refused pace and asks again', async () => {
    const url = await provider((res) => res.writeHead(429, { 'retry-after': '0' }).end('{"error":"slow down"}'));
    const rpc = new RpcClient({ urls: [url], log: quietLogger(), minRetryDelayMs: 1 });
    expect(await rpc.call('eth_chainId', [])).to.equal('0x1');
    expect(rpc.stats).to.include({ httpRequests: 2, rateLimited: 1 });
  });
});

describe('sync/RpcClient and its stop signal', () => {
  let server: Server;
  let url: string;
  let requests = 0;
  before(async () => {
    // Answers most requests; a 500 or a dropped socket for some, so that retries are in flight too.
    server = createServer((req, res) => {
      let text = '';
      req.on('data', (c: Buffer) => (text += c.toString()));
      req.on('end', () => {
        requests++;
        if (requests % 7 === 0) return void res.writeHead(500).end('busy');
        if (requests % 11 === 0) return void res.destroy();
        const calls = [JSON.parse(text)].flat() as Array<{ id: number }>;
        res.end(JSON.stringify(calls.map((c) => ({ jsonrpc: '2.0', id: c.id, result: '0x1' }))));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => server.close());

  it('holds one listener on the stop signal however many calls are in flight, and none piles up', async () => {
    const stop = new AbortController();
    const rpc = new RpcClient({ urls: [url], log: quietLogger(), minRetryDelayMs: 1, signal: stop.signal });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(`${warning.name}: ${warning.message}`);
    process.on('warning', onWarning);
    let most = 0;
    try {
      for (let round = 0; round < 40; round++) {
        const calls = Array.from({ length: 50 }, () => rpc.call('eth_chainId', []));
        most = Math.max(most, getEventListeners(stop.signal, 'abort').length);
        expect(await Promise.all(calls)).to.have.length(50);
      }
      await new Promise((r) => setImmediate(r)); // a warning is emitted on the next tick
    } finally {
      process.off('warning', onWarning);
    }
    expect(rpc.stats.retriedCalls, 'retries were in flight too').to.be.greaterThan(0);
    expect(most, 'listeners on the stop signal with 50 calls in flight').to.equal(1);
    expect(getEventListeners(stop.signal, 'abort'), 'listeners after 2,000 calls').to.have.length(1);
    expect(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning'))).to.deep.equal([]);
  });

  it('still abandons every call in flight when it aborts', async () => {
    const silent = createServer(() => undefined); // takes requests, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const stop = new AbortController();
      const rpc = new RpcClient({
        urls: [`http://127.0.0.1:${(silent.address() as AddressInfo).port}`],
        log: quietLogger(),
        signal: stop.signal,
      });
      const calls = Array.from({ length: 20 }, () =>
        rpc.call('eth_chainId', []).then(
          () => 'answered',
          (err: Error) => err.message,
        ),
      );
      await new Promise((r) => setTimeout(r, 100));
      stop.abort(new Error('stopping'));
      expect(await Promise.all(calls)).to.deep.equal(Array.from({ length: 20 }, () => 'stopping'));
    } finally {
      silent.closeAllConnections();
      silent.close();
    }
  });
});
