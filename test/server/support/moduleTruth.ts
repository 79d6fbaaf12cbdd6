/**
 * What the chain itself says of ERC-7579 accounts' modules, read straight from the node: every
 * ModuleInstalled / ModuleUninstalled log (eth_getLogs), its block's time, and the op it belongs to
 * (from the bundle transaction's receipt: the first UserOperationEvent after the log whose sender
 * emitted it, for an op's validation and its execution both precede its event). The current set is
 * the history replayed event by event. Tests compare opscan's answers with this.
 */
import { decodeAbiParameters, type Hex } from 'viem';
import type { Rpc } from '../../../devnet/rpc.js';
import { TOPICS } from '../../../shared/chain/constants.js';

type Log = {
  address: string;
  topics: string[];
  data: Hex;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
};

export type ChainHistoryEntry = {
  action: 'installed' | 'uninstalled';
  moduleTypeId: string;
  moduleType: string;
  module: string;
  blockNumber: string;
  blockTime: string;
  transactionHash: string;
  userOpHash: string;
};

export type ChainModules = {
  modules: Array<{
    moduleTypeId: string;
    moduleType: string;
    module: string;
    installedAt: { blockNumber: string; blockTime: string; transactionHash: string; userOpHash: string };
  }>;
  history: ChainHistoryEntry[];
};

const TYPE_NAMES: Record<string, string> = { '1': 'validator', '2': 'executor', '3': 'fallback', '4': 'hook' };

/** Every account that emitted a module event, with its history and current set as the chain has them. */
export async function chainModulesByAccount(rpc: Rpc): Promise<Map<string, ChainModules>> {
  const logs = await rpc.call<Log[]>('eth_getLogs', [
    { fromBlock: '0x0', toBlock: 'latest', topics: [[TOPICS.moduleInstalled, TOPICS.moduleUninstalled]] },
  ]);
  const receipts = new Map<string, Log[]>();
  const times = new Map<string, string>();
  for (const log of logs) {
    if (!receipts.has(log.transactionHash)) {
      const receipt = await rpc.call<{ logs: Log[] }>('eth_getTransactionReceipt', [log.transactionHash]);
      receipts.set(log.transactionHash, receipt.logs);
    }
    if (!times.has(log.blockHash)) {
      const block = await rpc.call<{ timestamp: string }>('eth_getBlockByHash', [log.blockHash, false]);
      times.set(log.blockHash, BigInt(block.timestamp).toString());
    }
  }
  const byAccount = new Map<string, ChainModules>();
  for (const log of logs) {
    const account = log.address.toLowerCase();
    const event = receipts
      .get(log.transactionHash)!
      .find(
        (l) =>
          Number(l.logIndex) > Number(log.logIndex) &&
          l.topics[0] === TOPICS.userOperationEvent &&
          `0x${l.topics[2]!.slice(26)}`.toLowerCase() === account,
      );
    // A module event outside any op of its emitter is no op's: opscan does not keep it.
    if (!event) continue;
    const [typeId, module] = decodeAbiParameters([{ type: 'uint256' }, { type: 'address' }], log.data);
    const moduleTypeId = typeId.toString();
    const entry: ChainHistoryEntry = {
      action: log.topics[0] === TOPICS.moduleInstalled ? 'installed' : 'uninstalled',
      moduleTypeId,
      moduleType: TYPE_NAMES[moduleTypeId] ?? 'unknown',
      module: module.toLowerCase(),
      blockNumber: BigInt(log.blockNumber).toString(),
      blockTime: times.get(log.blockHash)!,
      transactionHash: log.transactionHash.toLowerCase(),
      userOpHash: event.topics[1]!.toLowerCase(),
    };
    const mine = byAccount.get(account) ?? { modules: [], history: [] };
    mine.history.push(entry);
    byAccount.set(account, mine);
  }
  for (const mine of byAccount.values()) mine.modules = installedNow(mine.history);
  return byAccount;
}

/** The pairs whose latest event is an install, with it, in the order of those installs. */
function installedNow(history: ChainHistoryEntry[]): ChainModules['modules'] {
  const installed: ChainModules['modules'] = [];
  for (const e of history) {
    const at = installed.findIndex((m) => m.moduleTypeId === e.moduleTypeId && m.module === e.module);
    if (at >= 0) installed.splice(at, 1);
    if (e.action === 'installed') {
      const { blockNumber, blockTime, transactionHash, userOpHash } = e;
      installed.push({
        moduleTypeId: e.moduleTypeId,
        moduleType: e.moduleType,
        module: e.module,
        installedAt: { blockNumber, blockTime, transactionHash, userOpHash },
      });
    }
  }
  return installed;
}

/** Modules by the accounts that have them installed now, most first, ties by address (getTopModules' order). */
export function topModules(
  byAccount: Map<string, ChainModules>,
): Array<{ module: string; moduleTypeIds: string[]; moduleTypes: string[]; accountsLength: string }> {
  const usage = new Map<string, { accounts: Set<string>; types: Set<string> }>();
  for (const [account, { modules }] of byAccount) {
    for (const m of modules) {
      const u = usage.get(m.module) ?? { accounts: new Set(), types: new Set() };
      u.accounts.add(account);
      u.types.add(m.moduleTypeId);
      usage.set(m.module, u);
    }
  }
  return [...usage]
    .sort(([a, x], [b, y]) => y.accounts.size - x.accounts.size || (a < b ? -1 : 1))
    .map(([module, u]) => {
      const moduleTypeIds = [...u.types].sort((p, q) => Number(p) - Number(q));
      return {
        module,
        moduleTypeIds,
        moduleTypes: moduleTypeIds.map((t) => TYPE_NAMES[t] ?? 'unknown'),
        accountsLength: String(u.accounts.size),
      };
    });
}
