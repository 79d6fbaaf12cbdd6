import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { dispatcherEnvSchema, documentedVariables, indexerEnvSchema, loadConfig, webEnvSchema } from '../../shared/config.js';
import { ConfigError } from '../../shared/errors.js';

describe('loadConfig', () => {
  it('applies the embedded defaults on an empty environment', () => {
    const config = loadConfig(webEnvSchema, {});
    expect(config.DATABASE_URL).to.equal(undefined);
    expect(config.REDIS_URL).to.equal(undefined);
    expect(config.DATA_DIR).to.equal('./.data');
    expect(config.PORT).to.equal(3000);
    expect(config.networks.map((n) => n.name)).to.deep.equal(['devnet']);
    expect(config.networks[0]!.finalityDepth).to.equal(0);
  });

  it('resolves per-network variables, aliases and extra EntryPoints', () => {
    const config = loadConfig(indexerEnvSchema, {
      NETWORKS: 'baseSepolia, mainnet',
      RPC_URL_BASE_SEPOLIA: 'http://127.0.0.1:8545, http://127.0.0.1:8546',
      START_BLOCK_BASE_SEPOLIA: '100',
      FINALITY_DEPTH_MAINNET: '12',
      ENTRYPOINTS_MAINNET: 'v0.7:0x00000000000000000000000000000000000000AA',
      INDEXER_DELEGATIONS_BASE_SEPOLIA: 'all',
    });
    const [base, mainnet] = config.networks;
    expect([base!.delegations, mainnet!.delegations, config.INDEXER_DELEGATIONS]).to.deep.equal(['all', undefined, 'ops']);
    expect(() => loadConfig(indexerEnvSchema, { NETWORKS: 'base', INDEXER_DELEGATIONS_BASE: 'some' })).to.throw(/INDEXER_DELEGATIONS_BASE/);
    expect(base!.name).to.equal('base-sepolia');
    expect(base!.chainId).to.equal(84532);
    expect(base!.rpcUrls).to.deep.equal(['http://127.0.0.1:8545', 'http://127.0.0.1:8546']);
    expect(base!.startBlock).to.equal(100);
    expect(base!.finalityDepth).to.equal(30);
    expect(base!.entryPoints.map((e) => e.version)).to.deep.equal(['v0.6', 'v0.7', 'v0.8', 'v0.9']);
    expect(mainnet!.finalityDepth).to.equal(12);
    expect(mainnet!.entryPoints.at(-1)).to.deep.equal({
      version: 'v0.7',
      address: '0x00000000000000000000000000000000000000aa',
    });
  });

  it('lists every bad variable in one error', () => {
    let error: unknown;
    try {
      loadConfig(webEnvSchema, {
        PORT: 'eighty',
        LOG_LEVEL: 'loud',
        DATABASE_URL: 'mysql://x',
        NETWORKS: 'devnet,nowhere',
        RPC_URL_DEVNET: 'not a url',
        START_BLOCK_DEVNET: '-1',
      });
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(ConfigError);
    const text = (error as ConfigError).message;
    for (const name of ['PORT', 'LOG_LEVEL', 'DATABASE_URL', 'nowhere', 'RPC_URL_DEVNET', 'START_BLOCK_DEVNET']) {
      expect(text).to.include(name);
    }
  });

  it('resolves DEFAULT_NETWORK: named (any spelling), else the only network, else none', () => {
    const two = { NETWORKS: 'devnet,baseSepolia' };
    expect(loadConfig(webEnvSchema, { ...two, DEFAULT_NETWORK: 'base_sepolia' }).defaultNetwork?.name).to.equal('base-sepolia');
    expect(loadConfig(webEnvSchema, two).defaultNetwork).to.equal(null);
    expect(loadConfig(webEnvSchema, {}).defaultNetwork?.name).to.equal('devnet');
    expect(() => loadConfig(webEnvSchema, { ...two, DEFAULT_NETWORK: 'mainnet' }))
      .to.throw(ConfigError)
      .with.property('message')
      .that.includes('DEFAULT_NETWORK')
      .and.includes('devnet, base-sepolia');
  });

  it('finds where to subscribe to new heads: RPC_WS_URL, else a ws:// RPC_URL (whose http:// twin answers calls)', () => {
    const withWs = loadConfig(indexerEnvSchema, { RPC_URL_DEVNET: 'http://127.0.0.1:8545', RPC_WS_URL_DEVNET: 'ws://127.0.0.1:8546' });
    expect(withWs.networks[0]).to.deep.include({ rpcUrls: ['http://127.0.0.1:8545'], wsUrl: 'ws://127.0.0.1:8546' });
    const wsRpc = loadConfig(indexerEnvSchema, { RPC_URL_DEVNET: 'wss://node.example/v2/key,https://other.example' });
    expect(wsRpc.networks[0]).to.deep.include({
      rpcUrls: ['https://node.example/v2/key', 'https://other.example'],
      wsUrl: 'wss://node.example/v2/key',
    });
    const httpOnly = loadConfig(indexerEnvSchema, { RPC_URL_DEVNET: 'http://127.0.0.1:8545' });
    expect(httpOnly.networks[0]!.wsUrl).to.equal(undefined);
    expect(httpOnly.INDEXER_POLL_INTERVAL_MS).to.equal(2000);
    expect(() => loadConfig(indexerEnvSchema, { RPC_WS_URL_DEVNET: 'http://127.0.0.1:8545' })).to.throw(/RPC_WS_URL_DEVNET/);
    expect(() => loadConfig(indexerEnvSchema, { INDEXER_POLL_INTERVAL_MS: '0' })).to.throw(/INDEXER_POLL_INTERVAL_MS/);
  });

  it('treats empty variables as unset', () => {
    const config = loadConfig(dispatcherEnvSchema, { DATABASE_URL: '', WEBHOOK_ALLOW_PRIVATE_URLS: '' });
    expect(config.DATABASE_URL).to.equal(undefined);
    expect(config.WEBHOOK_ALLOW_PRIVATE_URLS).to.equal(false);
  });

  it('.env.example documents exactly the variables the schemas read', () => {
    const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
    // Per-network variables are shown for the devnet network (RPC_URL_DEVNET=…).
    const documented = [...example.matchAll(/^#?\s*([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!.replace(/_DEVNET$/, '_<NETWORK>'));
    const expected = documentedVariables().map((v) => v.name);
    expect([...new Set(documented)].sort()).to.deep.equal([...new Set(expected)].sort());
  });
});
