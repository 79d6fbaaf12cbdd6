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
async function keys(dataDir: string, ...args: string[]): Promise<{ stdout: string; code: number }> {
  try {
    const { stdout } = await run('npm', ['run', '--silent', 'keys', '--', ...args], {
      env: { ...process.env, DATABASE_URL: '', DATA_DIR: dataDir, LOG_LEVEL: 'silent' },
    });
    return { stdout, code: 0 };
  } catch (error) {
    const e = error as { stdout: string; code: number };
    return { stdout: e.stdout, code: e.code };
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
});
