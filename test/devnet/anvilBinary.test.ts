import { expect } from 'chai';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anvilBinary } from '../../devnet/chain.js';

describe('anvil binary', () => {
  it('comes from the npm package of this platform (linux-x64 here)', function () {
    if (process.platform !== 'linux' || process.arch !== 'x64') this.skip();
    expect(anvilBinary()).to.match(/@foundry-rs\/anvil-linux-amd64\/bin\/anvil$/);
  });

  it('falls back to an anvil on PATH where npm has no package, and says what to do when there is none', () => {
    const dir = mkdtempSync(join(tmpdir(), 'opscan-anvil-'));
    try {
      expect(() => anvilBinary('darwin', 'arm64', '/nonexistent')).to.throw(/No anvil binary for darwin-arm64.*Install Foundry.*RPC_URL_/);
      writeFileSync(join(dir, 'anvil'), '#!/bin/sh\n');
      chmodSync(join(dir, 'anvil'), 0o755);
      expect(anvilBinary('darwin', 'arm64', `/nonexistent:${dir}`)).to.equal(join(dir, 'anvil'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
