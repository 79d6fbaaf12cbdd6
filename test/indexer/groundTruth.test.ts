/**
 * The indexer against the devnet's ground truth: every stored field of every op, bundle, account,
 * transfer and daily metric equals what the generator recorded, on a real anvil chain running the
 * real EntryPoints v0.6/v0.7/v0.8, indexed into a real database.
 */
import { expect } from 'chai';
import { generate, startDevnet, type Devnet, type GroundTruth } from '../../devnet/index.js';
import { startIndexer, type Indexer } from '../../indexer/index.js';
import { SELECTORS } from '../../indexer/decode/abi.js';
import type { Db, Queryable } from '../../shared/db/client.js';
import * as accounts from '../../shared/db/tables/accounts.js';
import * as dailyActiveWallets from '../../shared/db/tables/dailyActiveWallets.js';
import * as dailyStats from '../../shared/db/tables/dailyStats.js';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import type { EntityKind } from '../../shared/db/tables/entityStats.js';
import * as logs from '../../shared/db/tables/logs.js';
import { useTestDb } from '../helpers/db.js';
import {
  canonical,
  entityTotalsFromTruth,
  opsPerSender,
  readEntityTotals,
  readOpsPerAccount,
  readStoredTruth,
  type StoredTruth,
} from './storedTruth.js';
import { devnetConfig, quietLogger } from './support.js';
import { TOPICS } from '../../shared/chain/constants.js';

describe('indexer vs devnet ground truth', function () {
  this.timeout(300_000);
  // Outer hooks: the database outlives the indexer (inner after hooks run first).
  const t = useTestDb();
  describe('a backfill of generated traffic', defineTests(t));
});

/** Every aggregate table, in a stable order. */
async function aggregateSnapshot(db: Queryable): Promise<unknown[]> {
  const tables = [
    'select * from entity_stats order by chain_id, kind, address',
    'select * from daily_stats order by chain_id, day',
    'select * from daily_active_wallets order by chain_id, day, address',
    // implementation is read from the chain, not summed from stored rows: a rebuilt row waits for
    // the naming pass (null), so it is left out here.
    "select to_jsonb(a) - 'implementation' as account from accounts a order by chain_id, address",
  ];
  return Promise.all(tables.map(async (sql) => (await db.query(sql)).rows));
}

function defineTests(t: { readonly db: Db }) {
  return function (this: Mocha.Suite) {
    let devnet: Devnet;
    let truth: GroundTruth;
    let stored: StoredTruth;
    let indexer: Indexer;

    before(async () => {
      devnet = await startDevnet();
      truth = structuredClone(await generate(devnet, { ops: Number(process.env.GT_OPS ?? 500), days: 3, seed: 21 }));
      // Small transfer-backfill groups: the ~70 addresses this history makes known are read in
      // several groups, each read while the previous one is written (backfillTransfers).
      indexer = startIndexer({
        db: t.db,
        config: devnetConfig(devnet.rpcUrl),
        log: quietLogger(),
        tuning: { transferBackfillAddresses: 7 },
      });
      await indexer.syncNow();
      stored = await readStoredTruth(t.db, devnet.chainId);
    });

    after(async () => {
      await indexer?.stop();
      await devnet?.stop();
    });

    const expected = (): StoredTruth => canonical(truth);

    it('stores every user operation with every field equal to the truth', () => {
      const want = expected().userOps;
      const got = canonical(stored).userOps;
      expect(got.length).to.equal(want.length);
      for (let i = 0; i < want.length; i++) expect(got[i], `op ${want[i]!.userOpHash}`).to.deep.equal(want[i]);
    });

    it('stores every bundle (index, bundler, beneficiary, ops, status, fee)', () => {
      expect(canonical(stored).bundles).to.deep.equal(expected().bundles);
    });

    it('stores every deployed account with its factory and creation op', () => {
      expect(canonical(stored).accounts).to.deep.equal(expected().accounts);
    });

    it('names each account: the npm SimpleAccounts by their code (at devnet addresses), MiniAccounts unknown', async () => {
      const { rows } = await t.db.query<{ address: string; implementation: string | null }>(
        'select address, implementation from accounts where chain_id = $1',
        [devnet.chainId],
      );
      const factoryName = new Map(Object.entries(truth.contracts).map(([name, address]) => [address, name]));
      const want = truth.accounts.map((a) => {
        const simple = /^simpleAccountFactory\.(v0\.\d)$/.exec(factoryName.get(a.factory) ?? '');
        return [a.address, simple ? `SimpleAccount ${simple[1]}` : 'unknown'];
      });
      expect(new Set(want.map(([, name]) => name)).size, 'kinds of accounts the traffic deploys').to.be.at.least(3);
      expect(Object.fromEntries(rows.map((r) => [r.address, r.implementation]))).to.deep.equal(Object.fromEntries(want));
    });

    it('stores every token and native transfer attributed to its op', () => {
      expect(canonical(stored).transfers).to.deep.equal(expected().transfers);
    });

    it('stores every plain-transaction token transfer to or from a known address (the setup mints), with no op', () => {
      const want = expected().plainTransfers;
      // Every account got both ERC-20s by mintBatch before its first op: none of them is inside a user op.
      expect(want.length).to.be.at.least(2 * truth.accounts.length);
      expect(canonical(stored).plainTransfers).to.deep.equal(want);
    });

    it('finds the transfers an account received before it became known (backfill), and keeps them apart from its ops', async () => {
      const { rows } = await t.db.query<{ pending: string }>(
        'select count(*) as pending from known_addresses where chain_id = $1 and backfilled_to is null',
        [devnet.chainId],
      );
      expect(Number(rows[0]!.pending)).to.equal(0);
      // Each deployed account was funded in an earlier block than its deployment.
      const funded = new Map(expected().plainTransfers.map((x) => [x.to, x.blockNumber]));
      for (const a of truth.accounts) expect(funded.get(a.address), a.address).to.be.below(a.blockNumber);
    });

    it('stores the daily metrics (ops, bundles, wallets created, gas collected, active wallets)', () => {
      expect(canonical(stored).days).to.deep.equal(expected().days);
    });

    it("keeps each past day's active wallets as one list in address order; the latest day's is read live", async () => {
      const { rows } = await t.db.query<{ day: number; active_wallet_list: string | null; live: string | null }>(
        `select d.day, d.active_wallet_list,
                (select string_agg(w.address, ''::bytea order by w.address) from daily_active_wallets w where w.chain_id = d.chain_id and w.day = d.day) as live
         from daily_stats d where d.chain_id = $1 order by d.day`,
        [devnet.chainId],
      );
      expect(rows.length).to.be.above(1);
      for (const r of rows.slice(0, -1)) expect(r.active_wallet_list, String(r.day)).to.equal(r.live ?? '0x');
      expect(rows.at(-1)!.active_wallet_list).to.equal(null);
    });

    it('counts ops per account for every sender', async () => {
      expect(await readOpsPerAccount(t.db, devnet.chainId)).to.deep.equal(opsPerSender(truth));
    });

    it('keeps entity stats per bundler, paymaster, factory and beneficiary (ops, bundles, accounts, gas)', async () => {
      expect(await readEntityTotals(t.db, devnet.chainId)).to.deep.equal(entityTotalsFromTruth(truth));
      const { rows } = await t.db.query<{ address: string; tx_fee_sum: string }>(
        `select address, tx_fee_sum::text from entity_stats where chain_id = $1 and kind = 'bundler'`,
        [devnet.chainId],
      );
      const fees = new Map<string, bigint>();
      const seen = new Set<string>();
      for (const b of truth.bundles) {
        if (seen.has(b.transactionHash)) continue;
        seen.add(b.transactionHash);
        fees.set(b.bundler, (fees.get(b.bundler) ?? 0n) + BigInt(b.transactionFee));
      }
      expect(new Map(rows.map((r) => [r.address, BigInt(r.tx_fee_sum)]))).to.deep.equal(fees);
    });

    it('writes one user_operation outbox event per op and one account_deployed per account, with the contract payload', async () => {
      const { rows } = await t.db.query<{ type: string; user_op_hash: string; payload: Record<string, unknown> }>(
        'select type, user_op_hash, payload from outbox_events where chain_id = $1 order by id',
        [devnet.chainId],
      );
      const ops = rows.filter((r) => r.type === 'user_operation');
      expect(ops.map((r) => r.user_op_hash)).to.deep.equal(canonical(truth).userOps.map((o) => o.userOpHash));
      const factoryOf = new Map(truth.accounts.map((a) => [a.address, a.factory]));
      const byHash = new Map(truth.userOps.map((o) => [o.userOpHash, o]));
      const partiesOf = new Map<string, Set<string>>();
      for (const x of truth.transfers) {
        const set = partiesOf.get(x.userOpHash) ?? new Set();
        for (const a of [x.from, x.to]) if (a !== '0x0000000000000000000000000000000000000000') set.add(a);
        partiesOf.set(x.userOpHash, set);
      }
      for (const r of ops) {
        const o = byHash.get(r.user_op_hash)!;
        expect(r.payload, o.userOpHash).to.deep.equal({
          userOpHash: o.userOpHash,
          sender: o.sender,
          paymaster: o.paymaster,
          bundler: o.bundler,
          beneficiary: o.beneficiary,
          factory: factoryOf.get(o.sender) ?? null,
          targets: [...new Set(o.calls.map((c) => c.target))],
          transferParties: r.payload.transferParties,
          blockNumber: o.blockNumber,
          blockHash: r.payload.blockHash,
          transactionHash: o.transactionHash,
          bundleIndex: o.bundleIndex,
          logIndex: o.logIndex,
        });
        expect(new Set(r.payload.transferParties as string[]), `${o.userOpHash} transfer parties`).to.deep.equal(
          partiesOf.get(o.userOpHash) ?? new Set(),
        );
      }
      const deployed = rows.filter((r) => r.type === 'account_deployed').map((r) => r.payload);
      expect(deployed.map((p) => p.account).sort()).to.deep.equal(truth.accounts.map((a) => a.address).sort());
      for (const p of deployed) expect(p.factory).to.equal(factoryOf.get(String(p.account)));
    });

    it('stores token metadata once per token', async () => {
      const { rows } = await t.db.query<{ address: string; standard: string; symbol: string | null; decimals: number | null }>(
        'select address, standard, symbol, decimals from tokens where chain_id = $1 order by address',
        [devnet.chainId],
      );
      const c = truth.contracts;
      const byAddress = new Map(rows.map((r) => [r.address, r]));
      expect(byAddress.get(c['erc20.usd6']!)).to.include({ standard: 'ERC20', decimals: 6 });
      expect(byAddress.get(c['erc20.dai18']!)).to.include({ standard: 'ERC20', decimals: 18 });
      expect(byAddress.get(c.erc721!)).to.include({ standard: 'ERC721', decimals: null });
      expect(byAddress.get(c.erc1155!)).to.include({ standard: 'ERC1155' });
    });

    it("reads multicall bundles inside the transaction input, traces only those it cannot read there (INDEXER_TRACES=needed), and keeps the traced ops' execution traces", async () => {
      const multicall = new Set(truth.bundles.filter((b) => b.bundleIndex > 0).map((b) => b.transactionHash));
      const hidden = new Set(truth.calldataOnlyInTraces);
      expect(hidden.size, 'multicalls hiding their calldata generated').to.be.greaterThan(0);
      expect([...multicall].filter((h) => !hidden.has(h)).length, 'multicalls carrying it readable generated').to.be.greaterThan(0);
      const { rows: statuses } = await t.db.query<{ decode_status: string; n: string }>(
        'select decode_status, count(*) as n from user_ops where chain_id = $1 group by decode_status',
        [devnet.chainId],
      );
      expect(statuses).to.deep.equal([{ decode_status: 'ok', n: String(truth.userOps.length) }]);
      const { rows } = await t.db.query<{ user_op_hash: string; status: string; trace: { to: string; input: string } | null }>(
        'select user_op_hash, status, trace from user_op_traces where chain_id = $1',
        [devnet.chainId],
      );
      // Trace rows come only with transactions traced anyway: those hiding their calldata.
      const tracedOps = truth.userOps.filter((o) => hidden.has(o.transactionHash));
      expect(rows.map((r) => r.user_op_hash).sort()).to.deep.equal(tracedOps.map((o) => o.userOpHash).sort());
      const byHash = new Map(truth.userOps.map((o) => [o.userOpHash, o]));
      for (const r of rows) {
        expect(r.status, r.user_op_hash).to.equal('ok');
        expect(r.trace!.to).to.equal(byHash.get(r.user_op_hash)!.entryPoint);
        expect([SELECTORS.innerHandleOpV06, SELECTORS.innerHandleOpV07]).to.include(r.trace!.input.slice(0, 10));
      }
    });

    it('stores every log of every bundle transaction, and answers each op its own', async () => {
      const txs = new Set(truth.bundles.map((b) => b.transactionHash));
      const { rows: perTx } = await t.db.query<{ tx_hash: string }>(
        'select tx_hash from bundle_transactions where chain_id = $1 and length(logs) > 0',
        [devnet.chainId],
      );
      expect(new Set(perTx.map((r) => r.tx_hash))).to.deep.equal(txs);
      let owned = 0;
      for (const op of truth.userOps) {
        const opLogs = await logs.listByUserOp(t.db, devnet.chainId, op.userOpHash);
        owned += opLogs.length;
        expect(opLogs.every((l) => l.userOpHash === op.userOpHash && l.transactionHash === op.transactionHash)).to.equal(true);
        // Each op's UserOperationEvent lies in its own slice.
        expect(opLogs.filter((l) => l.topics[0] === TOPICS.userOperationEvent && l.topics[1] === op.userOpHash)).to.have.length(1);
      }
      expect(owned).to.be.greaterThan(truth.userOps.length);
    });

    it('counts aggregates only for rows inserted the first time (re-indexing the same blocks changes nothing)', async () => {
      const before = await aggregateSnapshot(t.db);
      const { rows: events } = await t.db.query<{ n: string }>('select count(*) as n from outbox_events');
      await t.db.query('update indexer_state set indexed_block = start_block - 1, indexed_block_hash = null where chain_id = $1', [
        devnet.chainId,
      ]);
      await indexer.syncNow();
      expect(await aggregateSnapshot(t.db)).to.deep.equal(before);
      const { rows: after } = await t.db.query<{ n: string }>('select count(*) as n from outbox_events');
      expect(after[0]!.n).to.equal(events[0]!.n);
    });

    it('rebuilds the same aggregates from the base tables as it kept incrementally (the reorg path)', async () => {
      const before = await aggregateSnapshot(t.db);
      const chainId = devnet.chainId;
      const { rows: keys } = await t.db.query<{ kind: EntityKind; address: string }>(
        'select kind, address from entity_stats where chain_id = $1',
        [chainId],
      );
      await t.db.transaction(async (tx) => {
        for (const kind of ['bundler', 'paymaster', 'factory', 'beneficiary'] as const) {
          await entityStats.recompute(
            tx,
            chainId,
            kind,
            keys.filter((k) => k.kind === kind).map((k) => k.address),
          );
        }
        const days = (await tx.query<{ day: number }>('select day from daily_stats where chain_id = $1', [chainId])).rows.map((r) => r.day);
        await dailyActiveWallets.recompute(tx, chainId, days);
        await dailyStats.recompute(tx, chainId, days);
        const senders = (await tx.query<{ address: string }>('select address from accounts where chain_id = $1', [chainId])).rows.map(
          (r) => r.address,
        );
        await accounts.recompute(tx, chainId, senders);
      });
      expect(await aggregateSnapshot(t.db)).to.deep.equal(before);
    });

    it('reports its state for getNetworkStatus', async () => {
      const { rows } = await t.db.query<{ indexed_block: string; head_block: string; backfill_complete: boolean }>(
        'select indexed_block, head_block, backfill_complete from indexer_state where chain_id = $1',
        [devnet.chainId],
      );
      const head = Number(await devnet.rpc.call<string>('eth_blockNumber'));
      expect(rows[0]).to.deep.equal({ indexed_block: String(head), head_block: String(head), backfill_complete: true });
    });
  };
}
