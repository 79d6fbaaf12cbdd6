import type { Queryable } from '../../shared/db/client.js';
import * as moduleEvents from '../../shared/db/tables/moduleEvents.js';
import { moduleTypeOf, type AccountModules } from '../../shared/models/index.js';

/**
 * An account's ERC-7579 modules as answered (getAccountModules, getAddressActivity's
 * accountDetail.modules, GraphQL): the current set and the history it derives from.
 */
export async function accountModules(db: Queryable, chainId: number, account: string): Promise<AccountModules> {
  const history = await moduleEvents.listByAccount(db, chainId, account);
  return {
    modules: moduleEvents.currentModules(history).map((e) => ({
      moduleTypeId: e.moduleTypeId,
      moduleType: moduleTypeOf(e.moduleTypeId),
      module: e.module,
      installedAt: { blockNumber: e.blockNumber, blockTime: e.blockTime, transactionHash: e.transactionHash, userOpHash: e.userOpHash },
    })),
    history: history.map((e) => ({
      action: e.installed ? 'installed' : 'uninstalled',
      moduleTypeId: e.moduleTypeId,
      moduleType: moduleTypeOf(e.moduleTypeId),
      module: e.module,
      blockNumber: e.blockNumber,
      blockTime: e.blockTime,
      transactionHash: e.transactionHash,
      userOpHash: e.userOpHash,
    })),
  };
}
