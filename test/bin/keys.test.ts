import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { hashApiKey } from '../../shared/apiKeys.js';
import { createDb, type Db } from '../../shared/db/client.js';
import { createTestApp } from '../helpers/app.js';

const run = promisify(execFile);

/** Runs `npm run keys -- ARGS` the way a user does, against an embedded store in `dataDir`. */
const keys = (dataDir: string, ...args: string[]) => npmRun('keys', dataDir, args);
/** `npm run opscan -- ARGS`. */
const opscan = (dataDir: string, ...args: string[]) => npmRun('opscan', dataDir, args);

async function npmRun(script: string, dataDir: string, args: string[]): Promise<{ stdout: string; stderr?: string; code: number }> {
  try {
    const { stdout } = await run('npm', ['run', '--silent', script, '--', ...args], {
      env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    });
    return { stdout, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

describe('npm run keys', () => {
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'opscan-keys-'));
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates a key (alone on the last line), lists it and revokes it', async () => {
    const created = await keys(dataDir, 'create', 'demo');
    expect(created.code).to.equal(0);
    const key = created.stdout.trim().split('\n').at(-1)!;
    expect(key).to.match(/^ops_[0-9A-Za-z]{32}$/);
    const prefix = key.slice(0, 12);

    const listed = await keys(dataDir, 'list');
    expect(listed.stdout).to.include(prefix).and.include('demo').and.include('active');
    expect(listed.stdout).not.to.include(key);

    // The web process accepts the key, then refuses it once revoked.
    let db: Db = await createDb({ dataDir });
    let res = await request(createTestApp(db)).get('/v0/getNetworks').set('x-api-key', key);
    expect(res.status).to.equal(200);
    await db.close();

    const revoked = await keys(dataDir, 'revoke', prefix);
    expect(revoked.code).to.equal(0);
    db = await createDb({ dataDir });
    res = await request(createTestApp(db)).get('/v0/getNetworks').set('x-api-key', key);
    expect(res.status).to.equal(403);
    await db.close();
  });

  it('imports a key from a previous deployment: stored hashed, accepted on both dialects, listed and revoked by prefix', async () => {
    const jiffyscanKey = 'Xq3v9LmA2bC7dE1fG4hJ8kN0pR5sT6uW2yZ4aB9c'; // 40 alphanumerics, as JiffyScan issued them
    const imported = await keys(dataDir, 'import', 'from-jiffyscan', '--key', jiffyscanKey, '--rate-limit', '50');
    expect(imported.code, imported.stdout).to.equal(0);
    expect(imported.stdout).to.include('Xq3v9LmA2bC7').and.not.include(jiffyscanKey);

    let db: Db = await createDb({ dataDir });
    const stored = await db.query<{ key_hash: string; rate_limit_per_second: number }>(
      `select key_hash, rate_limit_per_second from api_keys where name = 'from-jiffyscan'`,
    );
    expect(stored.rows).to.deep.equal([{ key_hash: hashApiKey(jiffyscanKey), rate_limit_per_second: 50 }]);
    const app = createTestApp(db);
    for (const path of ['/v0/getNetworks', '/jiffyscan/v0/getNetworks']) {
      expect((await request(app).get(path).set('x-api-key', jiffyscanKey)).status, path).to.equal(200);
    }
    await db.close();

    const again = await keys(dataDir, 'import', 'twice', '--key', jiffyscanKey);
    expect(again.code).to.not.equal(0);
    const listed = await keys(dataDir, 'list');
    expect(listed.stdout).to.include('from-jiffyscan').and.not.include('twice');

    expect((await keys(dataDir, 'revoke', jiffyscanKey.slice(0, 12))).code).to.equal(0);
    db = await createDb({ dataDir });
    expect((await request(createTestApp(db)).get('/v0/getNetworks').set('x-api-key', jiffyscanKey)).status).to.equal(403);
    await db.close();
  });

  it('refuses to import what cannot be a key', async () => {
    for (const bad of ['short', 'has a space in it somewhere', '']) {
      expect((await keys(dataDir, 'import', 'bad', '--key', bad)).code, bad).to.not.equal(0);
    }
    expect((await keys(dataDir, 'import', 'no-value', '--key')).code).to.not.equal(0);
  });

  it('fails with usage on bad arguments', async () => {
    const bad = await keys(dataDir, 'create');
    expect(bad.code).to.not.equal(0);
    const unknown = await keys(dataDir, 'revoke', 'ops_nothere');
    expect(unknown.code).to.not.equal(0);
    expect((await keys(dataDir, 'create', 'x', '--rate-limit', 'fast')).code).to.not.equal(0);
  });

  // Three steps on one store, one test each: every step spawns several `npm run`s of a few seconds.
  let key: string;
  let prefix: string;

  it('manages plans: creates one, refuses a duplicate and a bad rate limit', async () => {
    const plan = await opscan(dataDir, 'plans', 'create', 'pro', '--rate-limit', '20', '--per-day', '1000', '--networks', 'devnet');
    expect(plan.code, plan.stderr).to.equal(0);
    expect(plan.stdout).to.include('pro').and.include('20/s burst 60').and.include('1000/day');
    expect((await opscan(dataDir, 'plans', 'create', 'pro', '--rate-limit', '1')).code).to.equal(1);
    const badPlan = await opscan(dataDir, 'plans', 'create', 'cheap', '--rate-limit', 'lots');
    expect(badPlan.code).to.equal(2);
    expect(badPlan.stderr).to.include('--rate-limit');
  });

  it('creates and imports keys on a plan, updates one, and keeps a plan in use', async () => {
    const created = await keys(dataDir, 'create', 'acme', '--plan', 'pro', '--scopes', 'read', '--expires', '2099-01-01');
    expect(created.code, created.stderr).to.equal(0);
    key = created.stdout.trim().split('\n').at(-1)!;
    prefix = key.slice(0, 12);
    const shown = await keys(dataDir, 'show', prefix, '--json');
    expect(JSON.parse(shown.stdout)).to.deep.include({ name: 'acme', plan: JSON.parse(shown.stdout).plan, scopes: ['read'] });
    expect(JSON.parse(shown.stdout).plan.name).to.equal('pro');
    expect((await keys(dataDir, 'create', 'bad', '--plan', 'nosuch')).code).to.equal(1);
    expect((await keys(dataDir, 'create', 'bad', '--scopes', 'write')).code).to.equal(2);

    const jiffyscanKey = 'Pl4nnedKeyFromJiffyScan0123456789abcdefX';
    const imported = await keys(dataDir, 'import', 'jiffy-pro', '--key', jiffyscanKey, '--plan', 'pro');
    expect(imported.code, imported.stderr).to.equal(0);
    expect(imported.stdout).to.include('on plan pro').and.not.include(jiffyscanKey);

    const updated = await keys(dataDir, 'update', prefix, '--plan', 'none', '--rate-limit', '5', '--scopes', 'read,webhooks');
    expect(updated.code, updated.stderr).to.equal(0);
    expect(updated.stdout).to.include('5/s').and.include('scopes read,webhooks');

    const inUse = await opscan(dataDir, 'plans', 'delete', 'pro');
    expect(inUse.code).to.equal(1);
    expect(inUse.stderr).to.include('used by 1 key');
    const listed = await opscan(dataDir, 'plans', 'list');
    expect(listed.stdout).to.include('pro').and.include('1 key(s)');
  });

  it('rotates a key with a grace period and reports usage by key and by endpoint', async () => {
    const rotated = await keys(dataDir, 'rotate', prefix, '--grace-hours', '1');
    expect(rotated.code, rotated.stderr).to.equal(0);
    const newKey = rotated.stdout.trim().split('\n').at(-1)!;
    expect(newKey)
      .to.match(/^ops_[0-9A-Za-z]{32}$/)
      .and.not.equal(key);
    const db: Db = await createDb({ dataDir });
    try {
      const app = createTestApp(db);
      for (const k of [key, newKey]) expect((await request(app).get('/v0/getNetworks').set('x-api-key', k)).status).to.equal(200);
      const old = await db.query<{ expires_at: Date; replaced_by: string | null }>(
        'select expires_at, replaced_by from api_keys where prefix = $1',
        [prefix],
      );
      expect(new Date(old.rows[0]!.expires_at).getTime() - Date.now()).to.be.within(3_500_000, 3_600_000);
      expect(old.rows[0]!.replaced_by).to.be.a('string');
      await db.query(
        `insert into api_key_usage (api_key_id, hour, endpoint, network, status_class, requests)
         select id, date_trunc('hour', now()), 'getUserOp', 'devnet', 2, 42 from api_keys where prefix = $1`,
        [prefix],
      );
    } finally {
      await db.close();
    }
    const usage = await opscan(dataDir, 'usage', '--by', 'key');
    expect(usage.code, usage.stderr).to.equal(0);
    expect(usage.stdout).to.include(prefix).and.include('42 requests');
    const perEndpoint = await opscan(dataDir, 'usage', '--key', prefix, '--by', 'endpoint', '--json');
    expect(JSON.parse(perEndpoint.stdout).rows).to.deep.equal([{ endpoint: 'getUserOp', requests: 42, clientErrors: 0, serverErrors: 0 }]);
    expect((await opscan(dataDir, 'usage', '--by', 'week')).code).to.equal(2);
  });
});
