import { expect } from 'chai';
import { acrossNetworks } from '../../server/endpoints/addressData.js';
import { testConfig } from '../helpers/app.js';

describe('acrossNetworks (lists over every indexed network)', () => {
  const networks = testConfig({ NETWORKS: 'devnet,sepolia,base' }).networks;
  // Each network's items, newest first: [network, time].
  const items: Record<string, number[]> = { devnet: [50, 30, 10], sepolia: [60, 30, 5], base: [] };
  const list = async (network: { name: string }, page: { first: number; skip: number }) =>
    items[network.name]!.slice(page.skip, page.skip + page.first).map((time) => ({ network: network.name, time }));

  it('merges the networks newest first, ties in network order, then cuts the page', async () => {
    const all = await acrossNetworks(networks, { first: 10, skip: 0 }, list, (i) => i.time);
    expect(all.map((i) => `${i.network}:${i.time}`)).to.deep.equal([
      'sepolia:60',
      'devnet:50',
      'devnet:30',
      'sepolia:30',
      'devnet:10',
      'sepolia:5',
    ]);
    const page = await acrossNetworks(networks, { first: 2, skip: 2 }, list, (i) => i.time);
    expect(page.map((i) => `${i.network}:${i.time}`)).to.deep.equal(['devnet:30', 'sepolia:30']);
  });

  it('asks each network for no more than skip + first rows', async () => {
    const asked: Array<{ first: number; skip: number }> = [];
    await acrossNetworks(
      networks,
      { first: 3, skip: 4 },
      async (n, p) => (asked.push(p), list(n, p)),
      (i) => i.time,
    );
    expect(asked).to.deep.equal([
      { first: 7, skip: 0 },
      { first: 7, skip: 0 },
      { first: 7, skip: 0 },
    ]);
  });
});
