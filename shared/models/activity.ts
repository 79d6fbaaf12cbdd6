import { z } from 'zod';
import { accountModuleSchema } from './modules.js';
import { addressOut, decimalString, hashOut } from './primitives.js';
import { userOpSchema } from './userOp.js';

/**
 * Resources of the explorer endpoints real clients (JiffyScan's explorer web app and SDK) call
 * beside the spec's. Their field names are the ones those clients read; quantities follow the spec's
 * convention (decimal strings).
 */

/** getAddressActivity: an account and its latest ops; present (with empty values) for any address. */
export const accountDetailSchema = z
  .object({
    id: z.string(),
    address: addressOut,
    network: z.string(),
    userOpsCount: decimalString,
    userOps: z.array(userOpSchema),
    /** Deployment of the account, null when no AccountDeployed was indexed for it. */
    factory: addressOut.nullable(),
    userOpHash: hashOut.nullable(),
    transactionHash: hashOut.nullable(),
    blockNumber: decimalString.nullable(),
    blockTime: decimalString.nullable(),
    /** The account's EntryPoint deposit as of its latest Deposited event (wei). */
    totalDeposits: decimalString,
    /** The implementation it runs, as on its ops (UserOp.implementation); null also for an address without ops. */
    implementation: z.string().nullable(),
    /** Its ERC-7579 modules installed now (getAccountModules' `modules`); empty for an account without any. */
    modules: z.array(accountModuleSchema),
    /** The EIP-7702 delegate the address runs, as its latest effective authorization set it (getAccountDelegations); null when none. */
    delegation: addressOut.nullable(),
  })
  .meta({ id: 'AccountDetail' });
export type AccountDetail = z.infer<typeof accountDetailSchema>;

/** getPaymasterActivity. */
export const paymasterDetailSchema = z
  .object({
    id: z.string(),
    address: addressOut,
    network: z.string(),
    userOpsLength: decimalString,
    /** Σ actualGasCost of the ops it paid for (wei). */
    gasSponsored: decimalString,
    totalDeposits: decimalString,
    userOps: z.array(userOpSchema),
  })
  .meta({ id: 'PaymasterDetail' });
export type PaymasterDetail = z.infer<typeof paymasterDetailSchema>;

/**
 * getBundleActivity: a bundle transaction and its ops. Block fields are null while the transaction
 * is not indexed (clients poll until `userOps` is non-empty).
 */
export const bundleDetailsSchema = z
  .object({
    transactionHash: hashOut,
    network: z.string(),
    userOpsLength: decimalString,
    blockNumber: decimalString.nullable(),
    blockTime: decimalString.nullable(),
    from: addressOut.nullable(),
    to: addressOut.nullable(),
    /** '1' success, '0' reverted (clients compare with the string '1'). */
    status: z.enum(['0', '1']).nullable(),
    /** What the sender paid (wei): gas used × effective gas price, plus the L1 data fee on OP-stack chains. */
    transactionFee: decimalString.nullable(),
    /** The OP-stack L1 data fee included in transactionFee (receipt `l1Fee`); null where the chain reports none. */
    l1Fee: decimalString.nullable(),
    userOps: z.array(userOpSchema),
  })
  .meta({ id: 'BundleDetails' });
export type BundleDetails = z.infer<typeof bundleDetailsSchema>;

/** getBlockActivity. */
export const blockActivitySchema = z
  .object({
    network: z.string(),
    blockNumber: decimalString,
    /** Null when the block holds no indexed op. */
    blockTime: decimalString.nullable(),
    userOpsLength: decimalString,
    userOps: z.array(userOpSchema),
  })
  .meta({ id: 'BlockActivity' });
export type BlockActivity = z.infer<typeof blockActivitySchema>;

/** getGlobalCounts (the subgraph's GlobalCounter). */
export const globalCountsSchema = z
  .object({
    id: z.string(),
    userOpCounter: decimalString,
    bundleCounter: decimalString,
    walletsCreated: decimalString,
  })
  .meta({ id: 'GlobalCounts' });
export type GlobalCounts = z.infer<typeof globalCountsSchema>;

/** What a search term is, as the explorer routes it. */
export const SEARCH_TYPES = ['userOpHash', 'bundle', 'account', 'paymaster', 'bundler', 'factory', 'block'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/** searchEntry: the first match, and every match across the searched networks. */
export const searchResultSchema = z
  .object({
    term: z.string(),
    foundInNetwork: z.string(),
    type: z.enum(SEARCH_TYPES),
    matches: z.array(z.object({ network: z.string(), type: z.enum(SEARCH_TYPES) })),
  })
  .meta({ id: 'SearchResult' });
export type SearchResult = z.infer<typeof searchResultSchema>;
