import { expect } from 'chai';
import { banner } from '../../bin/banner.js';
import { progressBar } from '../../indexer/progress.js';

describe('npm start banner and backfill bar', () => {
  const facts = {
    url: 'http://127.0.0.1:3000',
    network: 'devnet',
    userOpHash: `0x${'ab'.repeat(32)}`,
    store: 'PGlite in ./.data',
    sharedStore: false,
    demoChain: true,
  };

  it('on a first start: the status page, the docs, the new key and three curl commands using it', () => {
    const text = banner({ ...facts, newKey: 'ops_KEY' });
    expect(text)
      .to.include('Status page  http://127.0.0.1:3000/')
      .and.include('API docs     http://127.0.0.1:3000/docs')
      .and.include('API key      ops_KEY')
      .and.include('ERC-4337 RPC http://127.0.0.1:3000/rpc/devnet?apikey=ops_KEY ');
    const curls = text.split('\n').filter((l) => l.trim().startsWith('curl '));
    expect(curls.map((l) => l.trim())).to.deep.equal([
      'curl -H "x-api-key: ops_KEY" "http://127.0.0.1:3000/v0/getLatestUserOps?network=devnet&first=3"',
      `curl -H "x-api-key: ops_KEY" "http://127.0.0.1:3000/v0/getUserOp?network=devnet&hash=0x${'ab'.repeat(32)}"`,
      'curl -H "x-api-key: ops_KEY" "http://127.0.0.1:3000/v0/getDailyMetrics?network=devnet&noOfDays=7"',
    ]);
  });

  it('on a later start: no key, where to get one (stop first with the embedded store)', () => {
    const text = banner({ ...facts, newKey: null });
    expect(text).to.include('export OPSCAN_API_KEY=<your key>').and.include('stop opscan (Ctrl-C), run npx opscan keys create NAME');
    expect(text).to.include('curl -H "x-api-key: $OPSCAN_API_KEY"');
    expect(text).to.include('ERC-4337 RPC http://127.0.0.1:3000/rpc/devnet?apikey=$OPSCAN_API_KEY ');
    expect(banner({ ...facts, newKey: null, sharedStore: true })).to.include('another one: npx opscan keys create NAME');
  });

  it('draws a backfill bar: blocks done/total, ops/s, ETA', () => {
    const line = progressBar({
      network: 'base',
      blocksDone: 2500,
      blocksTotal: 10_000,
      indexedBlock: 12_499,
      userOps: 900,
      opsPerSecond: 120,
      etaSeconds: 65,
    });
    expect(line).to.equal(`base         [${'█'.repeat(6)}${'░'.repeat(18)}]  25%  2500/10000 blocks  120 ops/s  ETA 1m05s`);
  });
});
