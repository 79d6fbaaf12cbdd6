/**
 * Text from the chain that PostgreSQL cannot hold as it is, on PostgreSQL and on PGlite: a token
 * whose symbol holds a NUL and whose name holds an emoji, a tab and a newline, minted 2²⁵⁶−1 to a
 * known account and sent on in an op; an op reverting with a NUL in its Error(string), another
 * whose Error(string) is not UTF-8; a token named with 10,000 characters; a symbol a database rule
 * refuses; then ordinary traffic. The indexer reaches the head, the stored data equals the chain,
 * and the API answers the texts under the rule for them (shared/chainText.ts) and the amount
 * exactly. A batch the database refuses for good holds the network and says so, then moves on.
 */
import { expect } from 'chai';
import pino from 'pino';
import { register } from 'prom-client';
import request from 'supertest';
import { generate, mineTrafficBlock, startDevnet, type Devnet } from '../../devnet/index.js';
import { Random } from '../../devnet/random.js';
import { startIndexer } from '../../indexer/index.js';
import { indexerMetrics } from '../../indexer/metrics.js';
import { createDb, type Db } from '../../shared/db/client.js';
import { migrate } from '../../shared/db/migrate.js';
import type { Logger } from '../../shared/log.js';
import { createTestApp, createTestKey } from '../helpers/app.js';
import { TEST_DATABASE_URL, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { expectMatchesTruth } from './storedTruth.js';
import { devnetConfig, indexedBlock } from './support.js';
import { MAX_UINT256, deployToken, mintPlain, plainRevertAccounts, revertInOp, transferInOp } from './support/hostileChain.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const HOSTILE_NAME = 'emoji 🦄\ttab\nnewline';
const LONG_NAME = 'n'.repeat(10_000);
const utf8Hex = (text: string): string => `0x${Buffer.from(text, 'utf8').toString('hex')}`;

describe('text from the chain that PostgreSQL cannot hold as it is (a NUL, bytes that are not UTF-8, 10,000 characters)', function () {
  this.timeout(600_000);
  let devnet: Devnet;
  const chain = {
    token: '',
    longToken: '',
    refusedToken: '',
    holder: '',
    receiver: '',
    transferOp: '',
    nulRevertOp: '',
    notUtf8Op: '',
    /** The block whose op the database refuses for good in the write-failure case. */
    refusedOpBlock: 0,
  };

  before(async () => {
    devnet = await startDevnet();
    await generate(devnet, { ops: 16, days: 1, seed: 46 });
    const [a, b, c] = plainRevertAccounts(devnet);
    if (!a || !b || !c) throw new Error('the generated traffic deployed fewer than three accounts');
    chain.holder = a.address;
    chain.receiver = b.address;
    chain.token = await deployToken(devnet, HOSTILE_NAME, 'H\u0000X');
    await mintPlain(devnet, chain.token, a.address, MAX_UINT256);
    chain.transferOp = await transferInOp(devnet, a, { token: chain.token, to: b.address, amount: MAX_UINT256 });
    chain.nulRevertOp = await revertInOp(devnet, b, utf8Hex('nul \u0000 inside'));
    chain.notUtf8Op = await revertInOp(devnet, c, '0xc328ff');
    chain.longToken = await deployToken(devnet, LONG_NAME, 'LONG');
    await mintPlain(devnet, chain.longToken, c.address, 5n);
    chain.refusedToken = await deployToken(devnet, 'refused by a rule', 'REFUSED');
    await mintPlain(devnet, chain.refusedToken, c.address, 7n);
    const rng = new Random(46);
    for (let i = 0; i < 3; i++) await mineTrafficBlock(devnet, rng, 3);
    chain.refusedOpBlock = devnet.truth.userOps.at(-1)!.blockNumber;
  });
  after(async () => {
    await devnet?.stop();
  });

  const stores = TEST_DATABASE_URL ? (['PostgreSQL', 'PGlite'] as const) : (['PGlite'] as const);
  for (const store of stores) {
    describe(`on ${store}`, () => {
      let database: TestDatabase | undefined;
      let db: Db;
      const logged: Json[] = [];
      const log = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line) as Json) }) as unknown as Logger;
      let key = '';
      const app = () => request(createTestApp(db, { RPC_URL_DEVNET: devnet.rpcUrl }));
      const get = async (name: string, query: Record<string, string>): Promise<Json> => {
        const res = await app().get(`/v0/${name}`).set('x-api-key', key).query(query);
        expect(res.status, `${name} ${res.text}`).to.equal(200);
        return res.body as Json;
      };
      const index = async (): Promise<void> => {
        const indexer = startIndexer({ db, config: devnetConfig(devnet.rpcUrl), log });
        try {
          await indexer.syncNow();
        } finally {
          await indexer.stop();
        }
      };

      before(async () => {
        if (store === 'PostgreSQL') {
          database = await createTestDatabase();
          db = database.db;
        } else {
          db = await createDb({});
          await migrate(db);
        }
        key = await createTestKey(db, 'hostile', 1_000_000);
        // A rule PostgreSQL enforces on one value the rule for chain text keeps: the net under it.
        await db.query(`alter table tokens add constraint refuses_one_symbol check (symbol is distinct from 'REFUSED')`);
      });
      after(async () => {
        if (database) await database.drop();
        else await db?.close();
      });

      it('a batch the database refuses for good holds the network there, and getNetworkStatus and /metrics say which blocks and why', async () => {
        await db.query(`
          create function refuse_one_block() returns trigger language plpgsql as $$
          begin
            if new.block_number = ${chain.refusedOpBlock} then raise exception 'refused for this test'; end if;
            return new;
          end $$`);
        await db.query(`create trigger refuse_one_block before insert on user_ops for each row execute function refuse_one_block()`);
        indexerMetrics.watch(db, [{ name: 'devnet', chainId: devnet.chainId }]);
        const failedPass = async (): Promise<Json> => {
          const failed = await index().then(
            () => null,
            (err: unknown) => err,
          );
          expect(failed, 'the pass fails').to.be.instanceOf(Error);
          return (await get('getNetworkStatus', { network: 'devnet' })).writeFailure as Json;
        };
        const first = await failedPass();
        const status = await get('getNetworkStatus', { network: 'devnet' });
        expect(status.indexedBlock).to.be.below(chain.refusedOpBlock);
        expect(status.writeFailure.attempts).to.be.at.least(1);
        expect(status.writeFailure.fromBlock).to.equal(status.indexedBlock + 1);
        expect(status.writeFailure.toBlock).to.be.at.least(chain.refusedOpBlock);
        expect(status.writeFailure.reason).to.include('refused for this test');
        expect(Date.parse(status.writeFailure.since)).to.be.closeTo(Date.now(), 120_000);
        // Each attempt again at the same block counts, since the first.
        const second = await failedPass();
        expect(second.attempts).to.be.above(first.attempts);
        expect(second).to.include({ fromBlock: first.fromBlock, since: first.since });
        const summary = await app().get('/v0/getStatusSummary').query({ network: 'devnet' });
        expect(summary.body.networks[0].writeFailure).to.deep.equal(second);
        // A scrape shares one read of indexer_state for 100 ms: the first after it answers the state now.
        await new Promise((r) => setTimeout(r, 200));
        const metrics = (await register.metrics()).split('\n').filter((l) => l.startsWith('opscan_indexer_write_failure'));
        expect(metrics).to.include.members([
          `opscan_indexer_write_failure_attempts{network="devnet"} ${second.attempts}`,
          `opscan_indexer_write_failure_block{network="devnet"} ${second.fromBlock}`,
        ]);

        await db.query(`drop trigger refuse_one_block on user_ops`);
        await index();
        expect((await get('getNetworkStatus', { network: 'devnet' })).writeFailure).to.equal(null);
        await new Promise((r) => setTimeout(r, 200));
        const after = await register.metrics();
        expect(after).to.include('opscan_indexer_write_failure_attempts{network="devnet"} 0');
        expect(after).not.to.match(/opscan_indexer_write_failure_block\{/);
      });

      it('reaches the head, and what it stored equals the chain: every op, bundle, transfer (2²⁵⁶−1 too) and day', async () => {
        const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
        expect(await indexedBlock(db, devnet.chainId)).to.equal(head);
        await expectMatchesTruth(db, devnet.truth, (got, want, what) => expect(got, what).to.deep.equal(want));
      });

      it('keeps token names and symbols under the rule: NUL removed, emoji, tab and newline kept, 10,000 characters whole', async () => {
        const { rows } = await db.query<{ address: string; name: string | null; symbol: string | null }>(
          `select '0x' || encode(address, 'hex') as address, name, symbol from tokens where chain_id = $1`,
          [devnet.chainId],
        );
        const byAddress = new Map(rows.map((r) => [r.address, r]));
        expect(byAddress.get(chain.token)).to.include({ name: HOSTILE_NAME, symbol: 'HX' });
        expect(byAddress.get(chain.longToken)).to.include({ name: LONG_NAME, symbol: 'LONG' });
      });

      it('stores a text the database still refuses as null, the rest of its batch whole, and logs the contract, block and field once', async () => {
        const { rows } = await db.query<{ name: string | null; symbol: string | null }>(
          `select name, symbol from tokens where chain_id = $1 and address = decode($2, 'hex')`,
          [devnet.chainId, chain.refusedToken.slice(2)],
        );
        expect(rows).to.deep.equal([{ name: 'refused by a rule', symbol: null }]);
        const refusals = logged.filter((l) => l.contract === chain.refusedToken);
        expect(refusals).to.have.length(1);
        expect(refusals[0]).to.include({ field: 'tokens.symbol', userOpHash: null });
        expect(refusals[0]!.blockNumber).to.equal(devnet.truth.plainTransfers.find((t) => t.token === chain.refusedToken)!.blockNumber);
        expect(refusals[0]!.reason).to.include('refuses_one_symbol');
      });

      it('answers the 2²⁵⁶−1 transfer exactly, with the name and symbol as stored, in REST and GraphQL', async () => {
        const transfers = (await get('getAddressERC20Transfers', {
          network: 'devnet',
          address: chain.receiver,
          first: '100',
        })) as unknown as Json[];
        const received = transfers.filter((t) => t.rawContract.address === chain.token);
        expect(received.map((t) => [t.hash, t.userOpHash, t.from, t.to, BigInt(t.rawContract.value)])).to.deep.equal([
          [
            devnet.truth.userOps.find((o) => o.userOpHash === chain.transferOp)!.transactionHash,
            chain.transferOp,
            chain.holder,
            chain.receiver,
            MAX_UINT256,
          ],
        ]);
        expect(received[0]!.asset).to.equal('HX');
        const balances = (await get('getAddressBalances', { network: 'devnet', address: chain.receiver })) as unknown as Json[];
        expect(balances.find((b) => b.contract_address === chain.token)).to.include({
          balance: MAX_UINT256.toString(),
          contract_name: HOSTILE_NAME,
          contract_ticker_symbol: 'HX',
        });
        const graphql = await app()
          .post('/subgraphs/name/devnet')
          .set('x-api-key', key)
          .send({
            query: `{ userOps(where: { userOpHash: "${chain.transferOp}" }) { erc20Transfers { contractAddress from to value name symbol } } }`,
          });
        expect(graphql.status, graphql.text).to.equal(200);
        expect(graphql.body.data.userOps).to.deep.equal([
          {
            erc20Transfers: [
              {
                contractAddress: chain.token,
                from: chain.holder,
                to: chain.receiver,
                value: MAX_UINT256.toString(),
                name: HOSTILE_NAME,
                symbol: 'HX',
              },
            ],
          },
        ]);
      });

      it("keeps an op's revert string under the rule (NUL removed, bytes that are not UTF-8 as U+FFFD) and its bytes exactly", async () => {
        const opOf = async (hash: string): Promise<Json> =>
          ((await get('getUserOp', { network: 'devnet', hash })) as { userOps: Json[] }).userOps[0]!;
        const nul = await opOf(chain.nulRevertOp);
        expect(nul).to.include({ success: false, revertMessage: 'nul  inside' });
        expect(nul.revertReason).to.equal(devnet.truth.userOps.find((o) => o.userOpHash === chain.nulRevertOp)!.revertReason);
        const notUtf8 = await opOf(chain.notUtf8Op);
        expect(notUtf8).to.include({ success: false, revertMessage: '\ufffd(\ufffd' });
        expect(notUtf8.revertReason).to.equal(devnet.truth.userOps.find((o) => o.userOpHash === chain.notUtf8Op)!.revertReason);
      });
    });
  }
});
