/**
 * The peer of `npm run bench -- peer`: a Subsquid EVM processor (`@subsquid/evm-processor`, RPC
 * ingestion, no archive) that stores what an ERC-4337 explorer's backfill stores at the least: every
 * UserOperationEvent as an op row, the accounts (AccountDeployed, and each op's sender with its op
 * count) and the ops per day, in PostgreSQL. The store is the Database interface the processor asks
 * for, written on `pg` as @subsquid/typeorm-store does it: one transaction per processor batch, which
 * also moves the processor's status row (height, hash), and each table's rows written in one
 * multi-row statement.
 *
 * Environment: RPC_URL (the node), DATABASE_URL (an empty database), ENTRY_POINTS (comma-separated
 * addresses), HEAD (the block at which it prints `{"msg":"peer at head"}`; it then follows the head until it is killed). It prints
 * `{"msg":"peer started"}` once its store is connected, the moment the bench times it from.
 */
import { EvmBatchProcessor } from '@subsquid/evm-processor';
import { event, indexed } from '@subsquid/evm-abi';
import * as p from '@subsquid/evm-codec';
import pg from 'pg';

const userOperationEvent = event(
  '0x49628fd1471006c1482da88028e9ce4dbb080b815c9b0344d39e5a8e6ec1419f',
  'UserOperationEvent(bytes32,address,address,uint256,bool,uint256,uint256)',
  {
    userOpHash: indexed(p.bytes32),
    sender: indexed(p.address),
    paymaster: indexed(p.address),
    nonce: p.uint256,
    success: p.bool,
    actualGasCost: p.uint256,
    actualGasUsed: p.uint256,
  },
);
const accountDeployed = event(
  '0xd51a9c61267aa6196961883ecf5ff2da6619c37dac0fa92122513fb32c032d2d',
  'AccountDeployed(bytes32,address,address,address)',
  { userOpHash: indexed(p.bytes32), sender: indexed(p.address), factory: p.address, paymaster: p.address },
);

const head = Number(process.env.HEAD);
const entryPoints = process.env.ENTRY_POINTS.split(',').map((a) => a.toLowerCase());

const processor = new EvmBatchProcessor()
  .setRpcEndpoint({ url: process.env.RPC_URL })
  .setFinalityConfirmation(0)
  .setBlockRange({ from: 0 })
  .setFields({
    block: { timestamp: true },
    log: { topics: true, data: true, transactionHash: true, logIndex: true },
  })
  .addLog({ address: entryPoints, topic0: [userOperationEvent.topic, accountDeployed.topic] });

const SCHEMA = `
  create table if not exists status (id int primary key, height int not null, hash text not null);
  create table if not exists user_op (
    hash text primary key, entry_point text not null, sender text not null, paymaster text not null,
    nonce numeric not null, success boolean not null, actual_gas_cost numeric not null,
    actual_gas_used numeric not null, block_number int not null, block_time timestamptz not null,
    tx_hash text not null, log_index int not null);
  create index if not exists user_op_sender on user_op (sender, block_number);
  create table if not exists account (
    address text primary key, factory text, deployed_by_op text, deployed_at int, user_ops int not null);
  create table if not exists day (day date primary key, user_ops int not null);`;

/** The Database (FinalDatabase) the processor writes through: pg, one transaction per batch. */
class PgDatabase {
  constructor(url) {
    this.pool = new pg.Pool({ connectionString: url, max: 1 });
  }

  async connect() {
    await this.pool.query(SCHEMA);
    const { rows } = await this.pool.query('select height, hash from status where id = 0');
    console.log(JSON.stringify({ msg: 'peer started' }));
    return rows[0] ?? { height: -1, hash: '0x' };
  }

  async transact(info, cb) {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      const { rows } = await client.query('select height from status where id = 0 for update');
      if ((rows[0]?.height ?? -1) !== info.prevHead.height) throw new Error('status moved under the processor');
      await cb(client);
      await client.query('insert into status (id, height, hash) values (0, $1, $2) on conflict (id) do update set height = $1, hash = $2', [
        info.nextHead.height,
        info.nextHead.hash,
      ]);
      await client.query('commit');
    } catch (error) {
      await client.query('rollback');
      throw error;
    } finally {
      client.release();
    }
    if (info.nextHead.height >= head) console.log(JSON.stringify({ msg: 'peer at head', height: info.nextHead.height }));
  }
}

processor.run(new PgDatabase(process.env.DATABASE_URL), async (ctx) => {
  const ops = [];
  const accounts = new Map();
  const days = new Map();
  for (const block of ctx.blocks) {
    const day = new Date(block.header.timestamp).toISOString().slice(0, 10);
    for (const log of block.logs) {
      if (log.topics[0] === userOperationEvent.topic) {
        const e = userOperationEvent.decode(log);
        ops.push([
          e.userOpHash,
          log.address,
          e.sender,
          e.paymaster,
          e.nonce.toString(),
          e.success,
          e.actualGasCost.toString(),
          e.actualGasUsed.toString(),
          block.header.height,
          new Date(block.header.timestamp).toISOString(),
          log.transactionHash,
          log.logIndex,
        ]);
        const account = accounts.get(e.sender) ?? { factory: null, op: null, at: null, userOps: 0 };
        account.userOps++;
        accounts.set(e.sender, account);
        days.set(day, (days.get(day) ?? 0) + 1);
      } else if (log.topics[0] === accountDeployed.topic) {
        const e = accountDeployed.decode(log);
        const account = accounts.get(e.sender) ?? { factory: null, op: null, at: null, userOps: 0 };
        Object.assign(account, { factory: e.factory, op: e.userOpHash, at: block.header.height });
        accounts.set(e.sender, account);
      }
    }
  }
  const column = (i) => ops.map((row) => row[i]);
  if (ops.length > 0)
    await ctx.store.query(
      `insert into user_op select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::numeric[],
         $6::boolean[], $7::numeric[], $8::numeric[], $9::int[], $10::timestamptz[], $11::text[], $12::int[])
       on conflict (hash) do nothing`,
      Array.from({ length: 12 }, (_, i) => column(i)),
    );
  if (accounts.size > 0) {
    const list = [...accounts];
    await ctx.store.query(
      `insert into account select * from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::int[])
       on conflict (address) do update set user_ops = account.user_ops + excluded.user_ops,
         factory = coalesce(excluded.factory, account.factory),
         deployed_by_op = coalesce(excluded.deployed_by_op, account.deployed_by_op),
         deployed_at = coalesce(excluded.deployed_at, account.deployed_at)`,
      [
        list.map(([a]) => a),
        list.map(([, v]) => v.factory),
        list.map(([, v]) => v.op),
        list.map(([, v]) => v.at),
        list.map(([, v]) => v.userOps),
      ],
    );
  }
  if (days.size > 0)
    await ctx.store.query(
      `insert into day select * from unnest($1::date[], $2::int[])
       on conflict (day) do update set user_ops = day.user_ops + excluded.user_ops`,
      [[...days.keys()], [...days.values()]],
    );
});
