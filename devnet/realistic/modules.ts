/**
 * ERC-7579 module changes of the realistic devnet's modular accounts, sent as the calls of their
 * ops (permissionless' encodeInstallModule / encodeUninstallModule: the account calling its own
 * installModule / uninstallModule): once deployed, an account installs the devnet's executor and
 * hook in one batch, and in a later op uninstalls the executor. The init and de-init data are each
 * implementation's own layout.
 */
import { concat, encodeAbiParameters, zeroAddress, type Address, type Hex } from 'viem';
import { encodeInstallModule, encodeUninstallModule } from 'permissionless/utils';
import type { SmartAccount } from 'viem/account-abstraction';
import type { AccountType, ExecutionMode, RealAccount } from './accounts.js';
import type { RealisticContracts } from './contracts.js';
import type { Call } from './record.js';

/** A module change an op asks for. */
export type ModuleChange = { action: 'install' | 'uninstall'; moduleTypeId: 2 | 4; module: Address };

type ModularKind = {
  /** Hooks are a module type it installs (OpenZeppelin's AccountERC7579 has none without its Hooked extension). */
  hook: boolean;
  /** The executor's init data. */
  executorInit: Hex;
  /** The executor's de-init data. */
  executorDeinit: Hex;
  /** The hook's init data. */
  hookInit: Hex;
};

/**
 * Kernel v3.1+: initData = hook address (20 bytes; zero: none) ‖ abi.encode(executorData, hookData).
 * Nexus, Etherspot, Safe7579: executors in a linked list, de-init data = abi.encode(previous entry,
 * data); the executor installed last is the first entry, after the sentinel 0x…01. Safe7579's hook
 * init data = abi.encode(hook type, selector, data): type 0 (global) with selector 0 runs it on
 * every call.
 */
const KERNEL: ModularKind = {
  hook: true,
  executorInit: concat([zeroAddress, encodeAbiParameters([{ type: 'bytes' }, { type: 'bytes' }], ['0x', '0x'])]),
  executorDeinit: '0x',
  hookInit: '0x',
};
const LINKED_EXECUTORS: ModularKind = {
  hook: true,
  executorInit: '0x',
  executorDeinit: encodeAbiParameters([{ type: 'address' }, { type: 'bytes' }], ['0x0000000000000000000000000000000000000001', '0x']),
  hookInit: '0x',
};
const SAFE7579: ModularKind = {
  ...LINKED_EXECUTORS,
  hookInit: encodeAbiParameters([{ type: 'uint8' }, { type: 'bytes4' }, { type: 'bytes' }], [0, '0x00000000', '0x']),
};

const MODULAR: Partial<Record<AccountType, ModularKind>> = {
  'kernel-v3.1': KERNEL,
  'kernel-v3.2': KERNEL,
  'kernel-v3.3': KERNEL,
  nexus: LINKED_EXECUTORS,
  // Its hook is called by the ERC-7579 draft's preCheck(address,bytes), which the devnet's hook answers too.
  etherspot: LINKED_EXECUTORS,
  // Its Safe asks Rhinestone's module registry first, where the devnet's operator attests the modules (moduleRegistry.ts).
  safe7579: SAFE7579,
  oz7579: { hook: false, executorInit: '0x', executorDeinit: '0x', hookInit: '0x' },
};

/** The account types whose ops install and uninstall modules. */
export const MODULAR_TYPES = Object.keys(MODULAR) as AccountType[];

/** Whether `account`'s op of `mode` would carry its next module change (nextModuleChange). */
export function moduleChangeDue(account: RealAccount, mode: ExecutionMode): boolean {
  if (!MODULAR[account.type] || !account.deployed) return false;
  return (account.moduleStage === 'none' && mode === 'batch') || (account.moduleStage === 'installed' && mode !== 'replayable');
}

const toCall = (c: { to: Address; value: bigint; data: Hex }): Call => ({ target: c.to, value: c.value, data: c.data });

/**
 * The module calls `account`'s op of `mode` makes next (a batch turn installs, any later turn
 * uninstalls), or null when it makes none; advances the account's module stage.
 */
export function nextModuleChange(
  account: RealAccount,
  mode: ExecutionMode,
  contracts: RealisticContracts,
): { calls: Call[]; changes: ModuleChange[] } | null {
  const kind = MODULAR[account.type];
  if (!kind || !moduleChangeDue(account, mode)) return null;
  const sdk: SmartAccount = account.sdk;
  const { executor, hook } = contracts.erc7579Modules;
  if (account.moduleStage === 'none' && mode === 'batch') {
    const changes: ModuleChange[] = [
      { action: 'install', moduleTypeId: 2, module: executor },
      ...(kind.hook ? [{ action: 'install' as const, moduleTypeId: 4 as const, module: hook }] : []),
    ];
    const calls = encodeInstallModule({
      account: sdk,
      modules: changes.map((c) => ({
        type: c.moduleTypeId === 2 ? ('executor' as const) : ('hook' as const),
        address: c.module,
        initData: c.moduleTypeId === 2 ? kind.executorInit : kind.hookInit,
      })),
    }).map(toCall);
    account.moduleStage = 'installed';
    return { calls, changes };
  }
  if (account.moduleStage === 'installed') {
    const calls = encodeUninstallModule({
      account: sdk,
      modules: { type: 'executor', address: executor, deInitData: kind.executorDeinit },
    }).map(toCall);
    account.moduleStage = 'uninstalled';
    return { calls, changes: [{ action: 'uninstall', moduleTypeId: 2, module: executor }] };
  }
  return null;
}
