import { randomBytes } from 'node:crypto';
import { bytea, type Queryable } from '../../../shared/db/client.js';
import { OUTBOX_CHANNEL } from '../../../shared/outboxEvents.js';

/**
 * Writes what the indexer writes for an op (a user_ops row, its calls, an outbox event, the
 * cursor), for dispatcher tests that do not run the indexer. Addresses are lower-case hex.
 */

export const DEVNET = 31337;
export const randomAddress = () => `0x${randomBytes(20).toString('hex')}`;
export const randomHash = () => `0x${randomBytes(32).toString('hex')}`;

export type FakeOp = {
  userOpHash: string;
  sender: string;
  paymaster: string | null;
  bundler: string;
  /** Set on the op that deployed its sender (then an account_deployed event is written too). */
  deployedBy: string | null;
  targets: string[];
  transferParties: string[];
  blockNumber: number;
  blockHash: string;
  transactionHash: string;
  logIndex: number;
};

export function makeOp(overrides: Partial<FakeOp> = {}): FakeOp {
  return {
    userOpHash: randomHash(),
    sender: randomAddress(),
    paymaster: null,
    bundler: randomAddress(),
    deployedBy: null,
    targets: [],
    transferParties: [],
    blockNumber: 1,
    blockHash: randomHash(),
    transactionHash: randomHash(),
    logIndex: 0,
    ...overrides,
  };
}

/** Inserts the op's rows and outbox events; `factoryOfSender` marks an account deployed earlier. */
export async function insertOp(
  db: Queryable,
  op: FakeOp,
  options: { factoryOfSender?: string | null; chainId?: number } = {},
): Promise<void> {
  const chainId = options.chainId ?? DEVNET;
  // Its transaction and bundle hold its block hash, EntryPoint and beneficiary (the op's row does not).
  await db.query(
    `insert into bundle_transactions (chain_id, tx_hash, block_number, block_hash, block_time, tx_index, tx_from, input, status,
       gas_used, effective_gas_price, fee)
     values ($1, $2, $3, $4, $5, (select count(*) from bundle_transactions where chain_id = $1 and block_number = $3), $6, '', true,
       0, 0, 0)
     on conflict do nothing`,
    [chainId, bytea(op.transactionHash), op.blockNumber, bytea(op.blockHash), 1_700_000_000 + op.blockNumber, bytea(op.bundler)],
  );
  await db.query(
    `insert into bundles (chain_id, tx_hash, bundle_index, block_number, block_time, entry_point, entry_point_version, bundler, ops_count)
     values ($1, $2, 0, $3, $4, '\\x0000000071727de22e5e9d8baf0edac6f37da032', 'v0.7', $5, 1)
     on conflict do nothing`,
    [chainId, bytea(op.transactionHash), op.blockNumber, 1_700_000_000 + op.blockNumber, bytea(op.bundler)],
  );
  await db.query(
    `insert into user_ops (chain_id, user_op_hash, entry_point_version, sender, paymaster, nonce, success,
       actual_gas_cost, actual_gas_used, block_number, block_time, tx_hash, tx_index, bundle_index, log_index,
       bundler, factory, call_data)
     values ($1, $2, 'v0.7', $3, $4, 0, true, 1000, 100, $5, $6, $7, 0, 0, $8, $9, $10, '')`,
    [
      chainId,
      bytea(op.userOpHash),
      bytea(op.sender),
      bytea(op.paymaster),
      op.blockNumber,
      1_700_000_000 + op.blockNumber,
      bytea(op.transactionHash),
      op.logIndex,
      bytea(op.bundler),
      bytea(op.deployedBy),
    ],
  );
  if (op.targets.length > 0) {
    await db.query(
      // As the store keeps calls of value zero and empty data with no callData to slice.
      `update user_ops set calls_target = $3, calls_data = array_fill(''::bytea, array[$4::int])
       where chain_id = $1 and user_op_hash = $2`,
      [chainId, bytea(op.userOpHash), bytea(`0x${op.targets.map((t) => t.slice(2)).join('')}`), op.targets.length],
    );
  }
  const factory = op.deployedBy ?? options.factoryOfSender ?? null;
  if (op.deployedBy) {
    await db.query(
      `insert into accounts (chain_id, address, factory, created_user_op_hash, created_tx_hash, created_block_number)
       values ($1, $2, $3, $4, $5, $6) on conflict (chain_id, address) do update set factory = excluded.factory`,
      [chainId, bytea(op.sender), bytea(op.deployedBy), bytea(op.userOpHash), bytea(op.transactionHash), op.blockNumber],
    );
  }
  const common = { blockNumber: op.blockNumber, blockHash: op.blockHash, transactionHash: op.transactionHash };
  await insertOutbox(db, {
    chainId,
    type: 'user_operation',
    blockNumber: op.blockNumber,
    userOpHash: op.userOpHash,
    payload: {
      userOpHash: op.userOpHash,
      sender: op.sender,
      paymaster: op.paymaster,
      bundler: op.bundler,
      beneficiary: op.bundler,
      factory,
      targets: op.targets,
      transferParties: op.transferParties,
      ...common,
      bundleIndex: 0,
      logIndex: op.logIndex,
    },
  });
  if (op.deployedBy) {
    await insertOutbox(db, {
      chainId,
      type: 'account_deployed',
      blockNumber: op.blockNumber,
      userOpHash: op.userOpHash,
      payload: {
        userOpHash: op.userOpHash,
        account: op.sender,
        factory: op.deployedBy,
        paymaster: op.paymaster,
        ...common,
        logIndex: op.logIndex,
      },
    });
  }
}

export type OutboxRow = {
  chainId?: number;
  type: string;
  blockNumber: number;
  userOpHash: string | null;
  payload: Record<string, unknown>;
};

export async function insertOutbox(db: Queryable, row: OutboxRow): Promise<void> {
  const { chainId = DEVNET, type, blockNumber, userOpHash, payload } = row;
  await db.query(`insert into outbox_events (chain_id, type, block_number, user_op_hash, payload) values ($1, $2, $3, $4, $5)`, [
    chainId,
    type,
    blockNumber,
    bytea(userOpHash),
    JSON.stringify(payload),
  ]);
  await db.query(`select pg_notify($1, $2)`, [OUTBOX_CHANNEL, String(chainId)]);
}

/** Moves the indexer's cursor (what finality is measured from). */
export async function setIndexedBlock(db: Queryable, block: number, chainId = DEVNET): Promise<void> {
  await db.query(
    `insert into indexer_state (chain_id, network, start_block, indexed_block, head_block) values ($1, 'devnet', 0, $2, $2)
     on conflict (chain_id) do update set indexed_block = excluded.indexed_block, head_block = excluded.head_block`,
    [chainId, block],
  );
  await db.query(`select pg_notify($1, $2)`, [OUTBOX_CHANNEL, String(chainId)]);
}
