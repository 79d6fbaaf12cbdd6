import { expect } from 'chai';
import { bytea, createDb, type Db } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import { ensureChainPartitions, listChainPartitions } from '../../../shared/db/partitions.js';
import { useIndexedDevnet } from '../../server/support/indexedDevnet.js';

/** The per-network tables are list-partitioned by chain id. */

const TABLES = ['user_ops', 'token_transfers', 'address_transactions', 'user_op_traces', 'outbox_events'];

const partitionsOf = async (db: Db, table: string) =>
  (
    await db.query<{ name: string; bound: string }>(
      `select c.relname as name, pg_get_expr(c.relpartbound, c.oid) as bound from pg_inherits i join pg_class c on c.oid = i.inhrelid
       where i.inhparent = $1::regclass order by 1`,
      [table],
    )
  ).rows;

const countIn = async (db: Db, relation: string) =>
  Number((await db.query<{ n: string }>(`select count(*) as n from ${relation}`)).rows[0]!.n);

/** A user op row with only what the table requires, for chain `chainId`. */
async function insertOp(db: Db, chainId: number, hash: string): Promise<void> {
  const { rows } = await db.query<{ column_name: string; data_type: string }>(
    `select column_name, data_type from information_schema.columns
     where table_name = 'user_ops' and is_nullable = 'NO' and column_default is null order by ordinal_position`,
  );
  const value = (column: string, type: string): unknown => {
    if (column === 'chain_id') return chainId;
    // Text in the older schema this file also migrates through, bytea in today's.
    const hex = (value: string) => (type === 'bytea' ? bytea(value) : value);
    if (column === 'user_op_hash') return hex(hash);
    if (type === 'boolean') return true;
    if (type === 'text' || type === 'bytea') return hex('0x' + '1'.repeat(40));
    if (type.includes('time')) return new Date();
    return 1;
  };
  await db.query(
    `insert into user_ops (${rows.map((r) => r.column_name).join(', ')}) values (${rows.map((_, i) => `$${i + 1}`).join(', ')})`,
    rows.map((r) => value(r.column_name, r.data_type)),
  );
}

describe('partitions by chain id', () => {
  describe('on indexed devnet traffic', () => {
    const d = useIndexedDevnet({ ops: 60 });
    const chainId = () => d.truth.chainId;

    it('partitions every per-network table by chain id, with a default partition', async () => {
      for (const table of TABLES) {
        const { rows } = await d.db.query<{ strategy: string; key: string }>(
          `select p.partstrat as strategy, pg_get_partkeydef($1::regclass) as key from pg_partitioned_table p where p.partrelid = $1::regclass`,
          [table],
        );
        expect(rows, table).to.deep.equal([{ strategy: 'l', key: 'LIST (chain_id)' }]);
        expect((await partitionsOf(d.db, table)).map((p) => p.bound)).to.include('DEFAULT');
      }
    });

    it('gives an indexed network its own partitions, and every row lands there', async () => {
      expect(await listChainPartitions(d.db, chainId())).to.deep.equal(TABLES.map((t) => `${t}_${chainId()}`).sort());
      expect(await countIn(d.db, `user_ops_${chainId()}`)).to.equal(d.truth.userOps.length);
      expect(await countIn(d.db, 'user_ops_default')).to.equal(0);
      expect(await countIn(d.db, `token_transfers_${chainId()}`)).to.be.greaterThan(0);
      expect(await countIn(d.db, `outbox_events_${chainId()}`)).to.be.greaterThan(0);
    });

    it("keeps the hot queries on their indexes, reading only the network's partition", async () => {
      const op = d.truth.userOps[0]!;
      const plans = {
        getUserOp: ['select * from user_ops where chain_id = $1 and user_op_hash = $2', [chainId(), bytea(op.userOpHash)]],
        getLatestUserOps: ['select * from user_ops where chain_id = $1 order by block_number desc, log_index desc limit 10', [chainId()]],
        getAddressActivity: [
          'select * from user_ops where chain_id = $1 and sender = $2 order by block_number desc, log_index desc limit 10',
          [chainId(), bytea(op.sender)],
        ],
        // The ops of the op's transaction, which its logs are told apart by (logs.ts).
        getUserOpLogs: [
          'select * from user_ops where chain_id = $1 and tx_hash = $2 and log_index <= $3',
          [chainId(), bytea(op.transactionHash), op.logIndex],
        ],
        getAddressERC20Transfers: [
          'select * from token_transfers where chain_id = $1 and from_address = $2 order by block_number desc limit 10',
          [chainId(), bytea(op.sender)],
        ],
      } as const;
      // The plans a large table would get: sequential scans priced out, as on real data.
      await d.db.transaction(async (tx) => {
        await tx.query('set local enable_seqscan = off');
        for (const [name, [sql, params]] of Object.entries(plans)) {
          const { rows } = await tx.query<{ 'QUERY PLAN': string }>(`explain ${sql}`, [...params]);
          const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
          expect(plan, `${name}:\n${plan}`).to.match(/Index (Only )?Scan/);
          expect(plan, `${name}:\n${plan}`).to.match(new RegExp(`_${chainId()}\\b`));
          expect(plan, `${name}: pruned to one partition\n${plan}`).not.to.match(/_default\b/);
        }
      });
    });
  });

  it('moves the rows a chain wrote before it had partitions, and keeps other chains apart', async () => {
    const db = await createDb({});
    try {
      await migrate(db);
      await insertOp(db, 777, '0x' + 'a'.repeat(64));
      await insertOp(db, 888, '0x' + 'b'.repeat(64));
      expect(await countIn(db, 'user_ops_default')).to.equal(2);
      await ensureChainPartitions(db, 777);
      await ensureChainPartitions(db, 777); // idempotent
      expect(await countIn(db, 'user_ops_777')).to.equal(1);
      expect(await countIn(db, 'user_ops_default')).to.equal(1);
      expect(await countIn(db, 'user_ops')).to.equal(2);
      // The primary key holds across partitions of one chain, and a network can be dropped alone.
      const duplicate = await insertOp(db, 777, '0x' + 'a'.repeat(64)).then(
        () => null,
        (e: { code?: string }) => e.code,
      );
      expect(duplicate).to.equal('23505');
      await db.query('drop table user_ops_777');
      expect(await countIn(db, 'user_ops')).to.equal(1);
    } finally {
      await db.close();
    }
  });

  it('moves existing data into per-chain partitions when the migration runs', async () => {
    const db = await createDb({});
    try {
      const all = listMigrations();
      const before = all.filter((m) => m.name < '0010');
      await migrate(db, before);
      // Up to the partitioning migration only: later migrations change indexes on purpose (one drops two).
      const through0010 = all.filter((m) => m.name < '0011');
      await insertOp(db, 777, '0x' + 'c'.repeat(64));
      await insertOp(db, 777, '0x' + 'd'.repeat(64));
      await insertOp(db, 888, '0x' + 'e'.repeat(64));
      await db.query(
        `insert into outbox_events (chain_id, type, block_number, payload) values (777, 'reorg', 1, '{}'), (888, 'reorg', 2, '{}')`,
      );
      const indexes = async () =>
        (await db.query<{ name: string }>(`select indexname as name from pg_indexes where tablename = 'user_ops' order by 1`)).rows.map(
          (r) => r.name,
        );
      const namesBefore = await indexes();
      await migrate(db, through0010);
      expect(await countIn(db, 'user_ops_777')).to.equal(2);
      expect(await countIn(db, 'user_ops_888')).to.equal(1);
      expect(await countIn(db, 'outbox_events_888')).to.equal(1);
      expect(await indexes(), 'the same index names').to.deep.equal(namesBefore);
      // New outbox events keep taking ids from the same sequence, after the moved ones.
      const { rows } = await db.query<{ id: string }>(
        `insert into outbox_events (chain_id, type, block_number, payload) values (777, 'reorg', 3, '{}') returning id`,
      );
      expect(Number(rows[0]!.id)).to.equal(3);
    } finally {
      await db.close();
    }
  });
});
