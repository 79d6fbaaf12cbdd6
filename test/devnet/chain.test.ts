/**
 * The anvil node's own disk: the states it evicts from memory go to a folder of the node's own,
 * removed however the node stops (left in ~/.foundry/anvil/tmp, they once filled this disk).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { startChain } from '../../devnet/chain.js';

const CHILD = fileURLToPath(new URL('./support/chainChild.ts', import.meta.url));

async function until(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  return check();
}

describe('anvil state folder', function () {
  this.timeout(60_000);

  it('gives each node its own --cache-path and removes it on stop()', async () => {
    const chain = await startChain();
    const { stateDir } = chain;
    try {
      expect(existsSync(stateDir)).to.equal(true);
      await chain.rpc.call('evm_mine');
    } finally {
      await chain.stop();
    }
    expect(existsSync(stateDir)).to.equal(false);
  });

  it('removes it when the owning process is killed outright (SIGKILL)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], { stdio: ['ignore', 'pipe', 'inherit'] });
    const stateDir = await new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout }).once('line', resolve);
      child.once('exit', (code) => reject(new Error(`chain child exited (${code})`)));
    });
    expect(existsSync(stateDir)).to.equal(true);
    child.kill('SIGKILL');
    // The watchdog shell sees its pipe close, kills anvil, waits a second and removes the folder.
    expect(await until(() => !existsSync(stateDir), 10_000)).to.equal(true);
  });
});
