import { expect } from 'chai';
import { Contract, JsonRpcProvider } from 'ethers';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { z } from 'zod';
import { knownPlainTransfers, type TruthTransfer } from '../../devnet/index.js';
import { createApp } from '../../server/app.js';
import {
  accountDetailSchema,
  balanceSchema,
  erc20TransferSchema,
  nftTransferSchema,
  transactionSchema,
  userOpSchema,
} from '../../shared/models/index.js';
import { testDeps } from '../helpers/app.js';
import { newestFirst } from './support/expected.js';
import { useIndexedDevnet } from './support/indexedDevnet.js';

/** A transfer of the truth: inside an op, or (userOpHash null, blockNumber set) of a plain transaction. */
type AnyTransfer = Omit<TruthTransfer, 'userOpHash'> & { userOpHash: string | null; blockNumber?: number };

const byLogDesc = (a: AnyTransfer, b: AnyTransfer) => (b.logIndex ?? 0) - (a.logIndex ?? 0);

describe('address endpoints on indexed devnet traffic', () => {
  const d = useIndexedDevnet({ ops: 250, seed: 3 });

  /** Every transfer an address page lists: inside user ops, and of plain transactions to or from a known address (the setup mints). */
  const complete = (): AnyTransfer[] => [...d.truth.transfers, ...knownPlainTransfers(d.truth)];

  /** The address with the most transfers of `standards` (plain transactions' included), and those transfers newest first. */
  function busiest(standards: string[]): [string, AnyTransfer[]] {
    const transfers = complete().filter((t) => standards.includes(t.standard));
    const counts = new Map<string, number>();
    for (const t of transfers) for (const a of new Set([t.from, t.to])) counts.set(a, (counts.get(a) ?? 0) + 1);
    counts.delete('0x0000000000000000000000000000000000000000');
    const address = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const blockOf = (t: AnyTransfer) => t.blockNumber ?? d.truth.userOps.find((o) => o.transactionHash === t.transactionHash)!.blockNumber;
    // Items of one ERC-1155 TransferBatch share a log: the later batch position is the newer.
    const order = new Map(transfers.map((t, i) => [t, i]));
    const mine = transfers.filter((t) => t.from === address || t.to === address);
    return [address, mine.sort((a, b) => blockOf(b) - blockOf(a) || byLogDesc(a, b) || order.get(b)! - order.get(a)!)];
  }

  it('getAddressActivity answers an account, its deployment and its ops newest first', async () => {
    const account = d.truth.accounts[0]!;
    const ops = d.truth.userOps.filter((o) => o.sender === account.address).sort(newestFirst);
    const res = await d.get('getAddressActivity', {
      address: account.address.toUpperCase().replace('0X', '0x'),
      network: 'devnet',
      first: 3,
    });
    const { accountDetail } = z.object({ accountDetail: accountDetailSchema }).parse(res.body);
    expect(accountDetail).to.deep.include({
      address: account.address,
      userOpsCount: String(ops.length),
      factory: account.factory,
      userOpHash: account.userOpHash,
      transactionHash: account.transactionHash,
      blockNumber: String(account.blockNumber),
      blockTime: String(account.blockTime),
    });
    expect(accountDetail.userOps.map((o) => o.userOpHash)).to.deep.equal(ops.slice(0, 3).map((o) => o.userOpHash));
  });

  it('getAddressActivity always answers an accountDetail, even for an unknown address', async () => {
    const res = await d.get('getAddressActivity', { address: '0x0000000000000000000000000000000000000001', network: 'devnet' });
    expect(res.status).to.equal(200);
    expect(accountDetailSchema.parse(res.body.accountDetail)).to.deep.include({ userOps: [], userOpsCount: '0', factory: null });
  });

  it('getAddressERC20Transfers answers the transfers from or to an address, newest first', async () => {
    const [address, transfers] = busiest(['ERC20']);
    const res = await d.get('getAddressERC20Transfers', { address, network: 'devnet', first: 100 });
    const items = z.array(erc20TransferSchema).parse(res.body);
    expect(
      items.map((t) => [t.hash, t.logIndex, t.from, t.to, BigInt(t.rawContract.value!).toString(), t.rawContract.address]),
    ).to.deep.equal(transfers.slice(0, 100).map((t) => [t.transactionHash, t.logIndex, t.from, t.to, t.value, t.token]));
    expect(items.every((t) => t.category === 'erc20' && t.catergory === 'erc20' && t.asset)).to.equal(true);
  });

  it("getAddressERC20Transfers lists an account's plain-transaction transfers too (its funding), not only those inside its ops", async () => {
    const account = d.truth.accounts[0]!.address;
    const mine = complete().filter((t) => t.standard === 'ERC20' && (t.from === account || t.to === account));
    const plain = mine.filter((t) => t.userOpHash === null);
    expect(plain.length).to.be.at.least(2);
    const res = await d.get('getAddressERC20Transfers', { address: account, network: 'devnet', first: 100 });
    const items = z.array(erc20TransferSchema).parse(res.body);
    expect(items.map((t) => `${t.hash}:${t.logIndex}`)).to.have.members(mine.map((t) => `${t.transactionHash}:${t.logIndex}`));
    expect(items.filter((t) => t.userOpHash === null).map((t) => t.hash)).to.have.members(plain.map((t) => t.transactionHash));
  });

  it('getAddressNFTTransfers answers ERC-721 and ERC-1155 transfers, newest first', async () => {
    const [address, transfers] = busiest(['ERC721', 'ERC1155']);
    const res = await d.get('getAddressNFTTransfers', { address, network: 'devnet', first: 100 });
    const items = z.array(nftTransferSchema).parse(res.body);
    expect(items.map((t) => [t.hash, t.from, t.to, t.tokenId, String(t.value), t.category])).to.deep.equal(
      transfers.slice(0, 100).map((t) => [t.transactionHash, t.from, t.to, t.tokenId, t.value, t.standard.toLowerCase()]),
    );
  });

  it('getAddressTransactions answers the bundle transactions an account took part in, labelled', async () => {
    const account = d.truth.accounts[0]!.address;
    const hashes = new Set([
      ...d.truth.userOps.filter((o) => o.sender === account || o.calls.some((c) => c.target === account)).map((o) => o.transactionHash),
      ...d.truth.transfers.filter((t) => t.from === account || t.to === account).map((t) => t.transactionHash),
    ]);
    const res = await d.get('getAddressTransactions', { address: account, network: 'devnet', first: 100 });
    const items = z.array(transactionSchema).parse(res.body);
    expect(items.map((t) => t.tx_hash)).to.have.members([...hashes]);
    const heights = items.map((t) => t.block_height);
    expect(heights).to.deep.equal([...heights].sort((a, b) => b - a));
    for (const tx of items) {
      const bundle = d.truth.bundles.find((b) => b.transactionHash === tx.tx_hash)!;
      expect(tx).to.deep.include({
        from_address: bundle.bundler,
        fees_paid: bundle.transactionFee,
        successful: bundle.success,
        value_quote: null,
      });
      if (tx.to_address === bundle.entryPoint) expect(tx.to_address_label).to.match(/^EntryPoint v0\.\d$/);
    }
  });

  it('getAddressBalances reads the native and token balances live from the chain', async () => {
    const [address] = busiest(['ERC20', 'ERC721']);
    const res = await d.get('getAddressBalances', { address, network: 'devnet', first: 100 });
    const items = z.array(balanceSchema).parse(res.body);
    const provider = new JsonRpcProvider(d.devnet.rpcUrl, undefined, { staticNetwork: true });
    try {
      expect(items[0]).to.deep.include({
        native_token: 'true',
        contract_ticker_symbol: 'ETH',
        balance: (await provider.getBalance(address)).toString(),
      });
      const mine = complete().filter((t) => t.from === address || t.to === address);
      const tokens = new Set(mine.filter((t) => ['ERC20', 'ERC721'].includes(t.standard)).map((t) => t.token!));
      // ERC-1155: one item per id held, the amount the truth's transfers add up to (the devnet's
      // TestERC1155 getter is balanceOf(id, owner), not the standard's: the chain cannot be asked).
      const held = new Map<string, bigint>();
      for (const t of mine.filter((x) => x.standard === 'ERC1155')) {
        const key = `${t.token}:${t.tokenId}`;
        const delta = (t.to === address ? BigInt(t.value) : 0n) - (t.from === address ? BigInt(t.value) : 0n);
        held.set(key, (held.get(key) ?? 0n) + delta);
      }
      const fungible = items.slice(1).filter((b) => b.token_id === undefined);
      expect(fungible.map((b) => b.contract_address)).to.have.members([...tokens]);
      const multi = items.slice(1).filter((b) => b.token_id !== undefined);
      expect(multi.map((b) => [`${b.contract_address}:${b.token_id}`, b.balance])).to.have.deep.members(
        [...held].filter(([, v]) => v !== 0n).map(([k, v]) => [k, v.toString()]),
      );
      for (const item of fungible) {
        const balance = await new Contract(
          item.contract_address,
          ['function balanceOf(address) view returns (uint256)'],
          provider,
        ).getFunction('balanceOf')(address);
        expect(item.balance).to.equal(balance.toString());
        expect(item.contract_ticker_symbol).to.not.equal('');
      }
    } finally {
      provider.destroy();
    }
  });

  it('getAddressBalances is a 502 when the chain cannot be read', async () => {
    const deps = testDeps(d.db, { RPC_URL_DEVNET: 'http://127.0.0.1:1' });
    try {
      const { key } = d;
      const res = await request(createApp(deps))
        .get('/v0/getAddressBalances')
        .query({ address: d.truth.userOps[0]!.sender, network: 'devnet' })
        .set('x-api-key', key);
      expect(res.status).to.equal(502);
      expect(res.body.code).to.equal('BAD_GATEWAY');
    } finally {
      await deps.services.close();
    }
  });

  it('fills price quotes from the configured price source', async () => {
    const prices: Server = createServer((_req, res) => res.end(JSON.stringify({ ETH: 2000, DUSD: 1 })));
    await new Promise<void>((resolve) => prices.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(prices.address() as AddressInfo).port}/prices.json`;
    const deps = testDeps(d.db, { RPC_URL_DEVNET: d.devnet.rpcUrl, PRICE_SOURCE_URL: url, RATE_LIMIT_PER_SECOND: '1000' });
    try {
      const app = createApp(deps);
      const account = d.truth.accounts[0]!.address;
      const balances = await request(app)
        .get('/v0/getAddressBalances')
        .query({ address: account, network: 'devnet' })
        .set('x-api-key', d.key);
      const native = balanceSchema.parse(balances.body[0]);
      expect(native.quote_rate).to.equal('2000');
      expect(native.quote).to.be.closeTo((Number(native.balance) / 1e18) * 2000, 1e-6);
      expect(native.pretty_quote).to.match(/^\$[\d,]+\.\d\d$/);
      const txs = await request(app)
        .get('/v0/getAddressTransactions')
        .query({ address: account, network: 'devnet' })
        .set('x-api-key', d.key);
      const tx = transactionSchema.parse(txs.body[0]);
      expect(tx.gas_quote_rate).to.equal(2000);
      expect(tx.gas_quote).to.be.closeTo((Number(tx.fees_paid) / 1e18) * 2000, 1e-9);
      expect(tx.value_quote).to.equal(0);
    } finally {
      await deps.services.close();
      prices.close();
    }
  });

  it('getAddressAggregateData fills the arrays its filter names, over every network without one', async () => {
    const [address, transfers] = busiest(['ERC20']);
    const all = await d.get('getAddressAggregateData', { address, first: 100 });
    const body = z
      .object({
        userOps: z.array(userOpSchema),
        transactions: z.array(transactionSchema),
        erc20Transfers: z.array(erc20TransferSchema),
        erc721Transfers: z.array(nftTransferSchema),
      })
      .parse(all.body);
    expect(body.erc20Transfers.map((t) => t.hash)).to.deep.equal(transfers.slice(0, 100).map((t) => t.transactionHash));
    expect(body.userOps.map((o) => o.userOpHash)).to.deep.equal(
      d.truth.userOps
        .filter((o) => o.sender === address)
        .sort(newestFirst)
        .map((o) => o.userOpHash),
    );
    expect(body.transactions.length).to.be.greaterThan(0);

    const filtered = await d.get('getAddressAggregateData', { address, network: 'devnet', filter: 'ERC20Transfers, userOps', first: 100 });
    expect(filtered.body.erc20Transfers).to.deep.equal(body.erc20Transfers);
    expect(filtered.body.userOps).to.deep.equal(body.userOps);
    expect(filtered.body.transactions).to.deep.equal([]);
    expect(filtered.body.erc721Transfers).to.deep.equal([]);
  });
});
