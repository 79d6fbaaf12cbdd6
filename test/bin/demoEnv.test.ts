/**
 * Under `npm start`'s demo chain a newcomer's first webhook points to a receiver on
 * the same machine (http://127.0.0.1:…). The demo allows it; elsewhere the refusal names the setting
 * that would allow it, WEBHOOK_ALLOW_PRIVATE_URLS.
 */
import { expect } from 'chai';
import request from 'supertest';
import { demoChainEnv } from '../../bin/demoEnv.js';
import { findNetwork } from '../../shared/networks.js';
import { createTestApp, createTestKey } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';

const DEMO_RPC_URL = 'http://127.0.0.1:8545';

describe('npm start demo: webhooks to a local receiver', () => {
  const t = useTestDb();
  let key = '';
  before(async () => {
    key = await createTestKey(t.db, 'demo');
  });

  /** POST /v0/createWebhook to `webhookUrl` on an app configured by `env`. */
  const create = (env: Record<string, string | undefined>, webhookUrl: string) =>
    request(createTestApp(t.db, Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))))
      .post('/v0/createWebhook')
      .set('x-api-key', key)
      .send({ webhookUrl, filter: 'ADDRESS', identifier: `0x${'ab'.repeat(20)}`, chainId: 31337, apiName: 'local receiver' });

  const demo = (operatorEnv: Record<string, string> = {}) => demoChainEnv(operatorEnv, findNetwork('devnet')!, DEMO_RPC_URL);

  it('the demo accepts http:// and https:// receivers on loopback', async () => {
    for (const url of ['http://127.0.0.1:4000/hook', 'http://localhost:4000/hook', 'https://[::1]:4000/hook']) {
      const res = await create(demo(), url);
      expect(res.status, `${url}: ${JSON.stringify(res.body)}`).to.equal(200);
    }
  });

  it('the demo keeps the operator’s WEBHOOK_ALLOW_PRIVATE_URLS=false, and the refusal names the setting', async () => {
    const res = await create(demo({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' }), 'http://127.0.0.1:4000/hook');
    expect(res.status).to.equal(400);
    expect(res.body.param).to.equal('webhookUrl');
    expect(res.body.message).to.include('WEBHOOK_ALLOW_PRIVATE_URLS=true');
  });

  it('outside the demo a loopback or private receiver is refused, naming WEBHOOK_ALLOW_PRIVATE_URLS', async () => {
    for (const url of [
      'http://127.0.0.1:4000/hook',
      'https://127.0.0.1:4000/hook',
      'https://10.1.2.3/hook',
      'https://printer.local/hook',
    ]) {
      const res = await create({}, url);
      expect(res.status, url).to.equal(400);
      expect(res.body.message, url).to.include('WEBHOOK_ALLOW_PRIVATE_URLS=true');
    }
    // Plain http to a public host is never allowed: no setting is named for it.
    const res = await create({}, 'http://hooks.example.com/hook');
    expect(res.body.message).to.equal('Invalid parameter "webhookUrl": must be an https:// URL');
  });

  it('the demo points the devnet at its chain and keeps a WebSocket URL the operator gave', () => {
    expect(demo()).to.include({ RPC_URL_DEVNET: DEMO_RPC_URL, RPC_WS_URL_DEVNET: 'ws://127.0.0.1:8545' });
    expect(demo({ RPC_WS_URL_DEVNET: 'ws://127.0.0.1:9999' })).to.include({ RPC_WS_URL_DEVNET: 'ws://127.0.0.1:9999' });
  });
});
