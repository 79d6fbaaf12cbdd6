import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
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

  it('fails with usage on bad arguments', async () => {
    const bad = await keys(dataDir, 'create');
    expect(bad.code).to.not.equal(0);
    const unknown = await keys(dataDir, 'revoke', 'ops_nothere');
    expect(unknown.code).to.not.equal(0);
  });
});
