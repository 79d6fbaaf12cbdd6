import { expect } from 'chai';
import { findNetwork, findNetworkByChainId, specNetworkMap, envSuffix } from '../../shared/networks.js';

describe('network registry', () => {
  it('has the spec map plus the networks clients use and devnet', () => {
    expect(Object.keys(specNetworkMap())).to.have.length(21);
    expect(findNetwork('polygon-amoy')?.chainId).to.equal(80002);
    expect(findNetwork('optimism-sepolia')?.chainId).to.equal(11155420);
    expect(findNetwork('devnet')?.chainId).to.equal(31337);
    expect(findNetworkByChainId(8453)?.name).to.equal('base');
  });

  it('resolves the spellings real clients send', () => {
    const cases: Array<[string, string]> = [
      ['baseSepolia', 'base-sepolia'],
      ['bnbTestnet', 'bnb-testnet'],
      ['Base', 'base'],
      ['OPEN_CAMPUS_TEST', 'open-campus-test'],
      ['OP Mainnet', 'optimism'],
      ['Polygon', 'matic'],
      ['MAINNET', 'mainnet'],
      [' arbitrum ', 'arbitrum-one'],
      ['Bsc', 'bsc'],
    ];
    for (const [sent, canonical] of cases) expect(findNetwork(sent)?.name, sent).to.equal(canonical);
  });

  it('does not resolve unknown names', () => {
    for (const name of ['fallback', '', 'undefined', 'ethereum-classic', "base'; drop table x;--"]) {
      expect(findNetwork(name), name).to.equal(undefined);
    }
  });

  it('derives env-variable suffixes', () => {
    expect(envSuffix('base-sepolia')).to.equal('BASE_SEPOLIA');
  });

  it('has finality depths by chain family', () => {
    expect(findNetwork('mainnet')?.finalityDepth).to.equal(65);
    expect(findNetwork('matic')?.finalityDepth).to.equal(200);
    expect(findNetwork('arbitrum-one')?.finalityDepth).to.equal(240);
    expect(findNetwork('base')?.finalityDepth).to.equal(30);
  });
});
