import { z } from 'zod';
import { addressOut, decimalString, hashOut } from './primitives.js';

/**
 * ERC-7579 modules of an account, as its ModuleInstalled / ModuleUninstalled events record them
 * (the standard defines no getter for them).
 */

/**
 * The module types ERC-7579 names by id: 1 validator, 2 executor, 3 fallback, 4 hook. Any other id
 * (an extension's, such as ERC-7780's policies and signers) is `unknown`; its number is in
 * `moduleTypeId`.
 */
export const MODULE_TYPES = ['validator', 'executor', 'fallback', 'hook'] as const;
export const moduleTypeSchema = z.enum([...MODULE_TYPES, 'unknown']);
export type ModuleType = z.infer<typeof moduleTypeSchema>;

/** The name of module type `id` (a decimal string). */
export const moduleTypeOf = (id: string): ModuleType => MODULE_TYPES[Number(id) - 1] ?? 'unknown';

/** A module an account has installed now, with the install that put it there (its latest). */
export const accountModuleSchema = z
  .object({
    moduleTypeId: decimalString,
    moduleType: moduleTypeSchema,
    module: addressOut,
    installedAt: z.object({ blockNumber: decimalString, blockTime: decimalString, transactionHash: hashOut, userOpHash: hashOut }),
  })
  .meta({ id: 'AccountModule' });
export type AccountModule = z.infer<typeof accountModuleSchema>;

/** One ModuleInstalled or ModuleUninstalled event of the account, in an op. */
export const moduleHistoryEntrySchema = z
  .object({
    action: z.enum(['installed', 'uninstalled']),
    moduleTypeId: decimalString,
    moduleType: moduleTypeSchema,
    module: addressOut,
    blockNumber: decimalString,
    blockTime: decimalString,
    transactionHash: hashOut,
    userOpHash: hashOut,
  })
  .meta({ id: 'ModuleHistoryEntry' });

/** getAccountModules: the current set (install order) and every event (oldest first). */
export const accountModulesSchema = z
  .object({ modules: z.array(accountModuleSchema), history: z.array(moduleHistoryEntrySchema) })
  .meta({ id: 'AccountModules' });
export type AccountModules = z.infer<typeof accountModulesSchema>;

/** getTopModules: a module and how many accounts run it now. */
export const moduleSummarySchema = z
  .object({
    module: addressOut,
    /** The types the accounts installed it as, by id ascending. */
    moduleTypeIds: z.array(decimalString),
    moduleTypes: z.array(moduleTypeSchema),
    accountsLength: decimalString,
  })
  .meta({ id: 'ModuleSummary' });
