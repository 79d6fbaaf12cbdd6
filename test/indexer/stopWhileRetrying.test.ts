/**
 * Stopping the indexer while a pass retries a node that answers nothing useful: Ctrl-C in
 * `npm start` stops the demo chain and the indexer at the same moment, and the stop must not wait
 * out the RPC client's retry schedule (~16 s, longer than the 15 s a terminal is given).
 */
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startIndexer } from '../../indexer/index.js';
import { useTestDb } from '../helpers/db.js';
import { devnetConfig, eventually, quietLogger } from './support.js';

describe('the indexer stopped while its node fails', function () {
  this.timeout(30_000);
  const t = useTestDb();
  let server: Server;
  let requests = 0;
  before(async () => {
    // Every call answered 503: retried by the RPC client, never given up on quickly.
    server = createServer((req, res) => {
      requests++;
      req.resume();
      res.writeHead(503).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(() => server.close());

  it('ends a pass that is retrying at once', async () => {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const indexer = startIndexer({ db: t.db, config: devnetConfig(url), log: quietLogger() });
    await eventually(async () => requests >= 3, 10_000, 'the pass retrying');
    const started = performance.now();
    await indexer.stop();
    const ms = performance.now() - started;
    expect(ms, 'stop took (ms)').to.be.below(2_000);
    const asked = requests;
    await new Promise((r) => setTimeout(r, 500));
    expect(requests, 'requests after the stop').to.equal(asked);
  });
});
