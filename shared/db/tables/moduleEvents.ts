import { bytea, type Queryable } from '../client.js';
import { copyRows } from '../copy.js';
import type { Page } from '../page.js';
import { numeric, unnestInsert, type Column } from '../unnest.js';

/**
 * `module_events`: the ERC-7579 ModuleInstalled / ModuleUninstalled events each op's sender
 * emitted during the op (indexer/decode/moduleEvents.ts says which). An account's current modules
 * are derived from its history: a (module type, module) pair is installed when its latest event is
 * an install.
 */

export type NewModuleEvent = {
  blockNumber: number;
  logIndex: number;
  txHash: string;
  blockTime: number;
  userOpHash: string;
  account: string;
  installed: boolean;
  moduleTypeId: bigint;
  module: string;
};

const NEW_COLUMNS: ReadonlyArray<Column<NewModuleEvent>> = [
  ['chain_id', 'bigint', (_, chainId) => chainId],
  ['block_number', 'bigint', (e) => e.blockNumber],
  ['log_index', 'integer', (e) => e.logIndex],
  ['tx_hash', 'bytea', (e) => e.txHash],
  ['block_time', 'bigint', (e) => e.blockTime],
  ['user_op_hash', 'bytea', (e) => e.userOpHash],
  ['account', 'bytea', (e) => e.account],
  ['installed', 'boolean', (e) => e.installed],
  ['module_type_id', 'numeric', (e) => numeric(e.moduleTypeId)],
  ['module', 'bytea', (e) => e.module],
];

/** Appends rows never stored before (the rows of a range indexed for the first time): COPY. */
export async function appendMany(db: Queryable, chainId: number, events: NewModuleEvent[]): Promise<void> {
  await copyRows(db, 'module_events', NEW_COLUMNS, { rows: events, chainId });
}

/** Inserts the events not stored yet. */
export async function insertMany(db: Queryable, chainId: number, events: NewModuleEvent[]): Promise<void> {
  if (events.length === 0) return;
  const { text, values } = unnestInsert('module_events', NEW_COLUMNS, { rows: events, chainId }, 'on conflict do nothing');
  await db.query(text, values);
}

export async function deleteAbove(db: Queryable, chainId: number, blockNumber: number): Promise<void> {
  await db.query(`delete from module_events where chain_id = $1 and block_number > $2`, [chainId, blockNumber]);
}

// Reads (the API).

/** One event as answered: quantities as decimal strings, addresses and hashes as 0x-hex. */
export type ModuleEvent = {
  installed: boolean;
  moduleTypeId: string;
  module: string;
  blockNumber: string;
  blockTime: string;
  transactionHash: string;
  userOpHash: string;
};

type EventRow = {
  installed: boolean;
  module_type_id: string;
  module: string;
  block_number: string;
  block_time: string;
  tx_hash: string;
  user_op_hash: string;
};

const toEvent = (r: EventRow): ModuleEvent => ({
  installed: r.installed,
  moduleTypeId: r.module_type_id,
  module: r.module,
  blockNumber: r.block_number,
  blockTime: r.block_time,
  transactionHash: r.tx_hash,
  userOpHash: r.user_op_hash,
});

/** `account`'s module events, oldest first. */
export async function listByAccount(db: Queryable, chainId: number, account: string): Promise<ModuleEvent[]> {
  const { rows } = await db.query<EventRow>(
    `select installed, module_type_id, module, block_number, block_time, tx_hash, user_op_hash
     from module_events where chain_id = $1 and account = $2
     order by block_number, log_index`,
    [chainId, bytea(account)],
  );
  return rows.map(toEvent);
}

/**
 * The modules a history leaves installed, in the order of the installs that put them there: each
 * (module type, module) pair whose latest event is an install, with that install.
 */
export function currentModules(history: readonly ModuleEvent[]): ModuleEvent[] {
  const latest = new Map<string, ModuleEvent>();
  for (const e of history) {
    const key = `${e.moduleTypeId}:${e.module}`;
    // Re-inserted, so that the map's order is the order of the latest events.
    latest.delete(key);
    latest.set(key, e);
  }
  return [...latest.values()].filter((e) => e.installed);
}

/** A module with the accounts that run it now, and the types they installed it as (ascending). */
export type ModuleUsage = { module: string; moduleTypeIds: string[]; accounts: string };

/**
 * Modules by the number of accounts whose current set holds them (under any type), most first,
 * ties by address. Reads every account's latest event per pair: module events are a few per
 * account, far fewer than ops.
 */
export async function listTopByAccounts(db: Queryable, chainId: number, { first, skip }: Page): Promise<ModuleUsage[]> {
  const { rows } = await db.query<{ module: string; module_type_ids: string[]; accounts: string }>(
    `select module, array_agg(distinct module_type_id order by module_type_id) as module_type_ids, count(distinct account) as accounts
     from (select distinct on (account, module_type_id, module) account, module_type_id, module, installed
           from module_events where chain_id = $1
           order by account, module_type_id, module, block_number desc, log_index desc) latest
     where installed
     group by module
     order by count(distinct account) desc, module
     limit $2 offset $3`,
    [chainId, first, skip],
  );
  return rows.map((r) => ({ module: r.module, moduleTypeIds: r.module_type_ids.map(String), accounts: r.accounts }));
}
