import type { EntityView } from '../../shared/db/entityView.js';
import { accountView } from '../../shared/db/tables/accounts.js';
import { bundleView } from '../../shared/db/tables/bundles.js';
import { dailyMetricView, globalCounterView } from '../../shared/db/tables/dailyStats.js';
import { bundlerView, factoryView, paymasterView } from '../../shared/db/tables/entityStats.js';
import { delegationView } from '../../shared/db/tables/delegations.js';
import { depositView } from '../../shared/db/tables/entryPointDeposits.js';
import { tokenTransferView } from '../../shared/db/tables/tokenTransfers.js';
import { userOpView } from '../../shared/db/tables/userOps.js';

/**
 * The subgraph's entities: each is a table view (shared/db/tables/*) with the names it is queried
 * by and its relations to other entities. A relation joins the parent's fields to the child's
 * indexed columns; the children of all parents of one level load in one query (resolvers.ts).
 */

export type EntityName =
  | 'UserOp'
  | 'Bundle'
  | 'Account'
  | 'Paymaster'
  | 'Factory'
  | 'Bundler'
  | 'DailyMetric'
  | 'GlobalCounter'
  | 'Deposit'
  | 'TokenTransfer'
  | 'Delegation';

export type Relation = {
  entity: EntityName;
  list: boolean;
  /** Pairs of (parent field, child column): the child rows whose columns equal the parent's fields. */
  on: Array<[parentField: string, childColumn: string]>;
  /** A further condition on the child rows. */
  where?: string;
  description: string;
};

export type Entity = {
  name: EntityName;
  description: string;
  view: EntityView;
  /** Query fields: the collection and the single entity by id (null: reachable only as a relation). */
  collection: string | null;
  single: string | null;
  /** Whether the type answers the network's name (as the subgraph's UserOp and Bundle do). */
  network: boolean;
  relations: Record<string, Relation>;
};

const opsOf = (column: string, whose: string): Relation => ({
  entity: 'UserOp',
  list: true,
  on: [['address', column]],
  description: `The ${whose}'s user operations.`,
});

export const ENTITIES: Readonly<Record<EntityName, Entity>> = {
  UserOp: {
    name: 'UserOp',
    description: 'A user operation, id `<userOpHash>-<logIndex>`.',
    view: userOpView,
    collection: 'userOps',
    single: 'userOp',
    network: true,
    relations: {
      bundle: {
        entity: 'Bundle',
        list: false,
        on: [
          ['transactionHash', 't.tx_hash'],
          ['bundleIndex', 't.bundle_index'],
        ],
        description: 'The bundle that executed the op.',
      },
      accountSender: { entity: 'Account', list: false, on: [['sender', 't.address']], description: 'The sending account.' },
      accountTarget: {
        entity: 'Account',
        list: false,
        on: [['target', 't.address']],
        description: 'The target, when it is an account opscan has seen send ops.',
      },
      // An op's transfers by its block, through token_transfers' key, then by its hash (no index on it).
      erc20Transfers: {
        entity: 'TokenTransfer',
        list: true,
        on: [
          ['blockNumber', 't.block_number'],
          ['userOpHash', 't.user_op_hash'],
        ],
        where: "t.standard = 'ERC20'",
        description: 'ERC-20 transfers made while the op executed.',
      },
      erc721Transfers: {
        entity: 'TokenTransfer',
        list: true,
        on: [
          ['blockNumber', 't.block_number'],
          ['userOpHash', 't.user_op_hash'],
        ],
        where: "t.standard = 'ERC721'",
        description: 'ERC-721 transfers made while the op executed.',
      },
    },
  },
  Bundle: {
    name: 'Bundle',
    description: 'One handleOps call, id `<transactionHash>-<bundleIndex>` (a transaction may carry several).',
    view: bundleView,
    collection: 'bundles',
    single: 'bundle',
    network: true,
    relations: {
      userOps: {
        entity: 'UserOp',
        list: true,
        // The block too: a bundle's ops are in its block, a range of user_ops_latest (user_ops has no
        // index by transaction).
        on: [
          ['transactionHash', 't.tx_hash'],
          ['bundleIndex', 't.bundle_index'],
          ['blockNumber', 't.block_number'],
        ],
        description: 'The ops of the bundle.',
      },
    },
  },
  Account: {
    name: 'Account',
    description: 'A smart account (every sender seen), id = its address.',
    view: accountView,
    collection: 'accounts',
    single: 'account',
    network: false,
    relations: {
      userOps: { ...opsOf('t.sender', 'account'), description: 'The ops the account sent.' },
      delegations: {
        entity: 'Delegation',
        list: true,
        on: [['address', 't.authority']],
        description: 'The EIP-7702 authorizations the address signed.',
      },
    },
  },
  Paymaster: {
    name: 'Paymaster',
    description: 'A paymaster and its totals, id = its address.',
    view: paymasterView,
    collection: 'paymasters',
    single: 'paymaster',
    network: false,
    relations: { userOps: opsOf('t.paymaster', 'paymaster') },
  },
  Factory: {
    name: 'Factory',
    description: 'An account factory and its totals, id = its address.',
    view: factoryView,
    collection: 'factories',
    single: 'factory',
    network: false,
    relations: {
      accounts: { entity: 'Account', list: true, on: [['address', 't.factory']], description: 'The accounts it deployed.' },
    },
  },
  Bundler: {
    name: 'Bundler',
    description: 'A bundler (the sender of bundle transactions) and its totals, id = its address.',
    view: bundlerView,
    collection: 'bundlers',
    single: 'bundler',
    network: false,
    relations: {
      userOps: opsOf('t.bundler', 'bundler'),
      bundles: { entity: 'Bundle', list: true, on: [['address', 't.bundler']], description: "The bundler's bundles." },
    },
  },
  DailyMetric: {
    name: 'DailyMetric',
    description: 'Counts of one UTC day and running totals up to it, id = days since the epoch.',
    view: dailyMetricView,
    collection: 'dailyMetrics',
    single: 'dailyMetric',
    network: false,
    relations: {},
  },
  GlobalCounter: {
    name: 'GlobalCounter',
    description: "The network's totals, id `global`.",
    view: globalCounterView,
    collection: 'globalCounters',
    single: 'globalCounter',
    network: false,
    relations: {},
  },
  Deposit: {
    name: 'Deposit',
    description: "An EntryPoint Deposited event: the account's deposit after it. id `<transactionHash>-<logIndex>`.",
    view: depositView,
    collection: 'deposits',
    single: 'deposit',
    network: false,
    relations: {},
  },
  Delegation: {
    name: 'Delegation',
    description:
      "An EIP-7702 authorization (one tuple of a transaction's authorization list), id `<transactionHash>-<index in the list>`; `status` says whether it took effect.",
    view: delegationView,
    collection: 'delegations',
    single: 'delegation',
    network: false,
    relations: {},
  },
  TokenTransfer: {
    name: 'TokenTransfer',
    description: 'A token transfer made while an op executed.',
    view: tokenTransferView,
    collection: null,
    single: null,
    network: false,
    relations: {},
  },
};
