import { z } from 'zod';
import { bundlerUserOpSchema } from './userOp.js';
import { addressOut, decimalString, hashOut, signedDecimalString } from './primitives.js';

/** getLatestBundles item. `from`, `status`, `transactionFee` are the names real clients read. */
export const bundleSchema = z
  .object({
    userOpsLength: decimalString,
    transactionHash: hashOut,
    network: z.string(),
    blockNumber: decimalString,
    blockTime: decimalString,
    userOps: z.array(z.object({ id: z.string(), userOpHash: hashOut })),
    from: addressOut,
    to: addressOut.nullable(),
    /** '1' when the bundle transaction succeeded (clients compare with the string '1'). */
    status: z.enum(['0', '1']),
    transactionFee: decimalString,
    /** What its ops paid (wei): Σ their actualGasCost, collected by its beneficiary. */
    revenue: decimalString,
    /**
     * revenue less the bundle's share of transactionFee (the whole fee unless the transaction holds
     * several bundles, which split it in proportion to their revenue); may be negative.
     */
    profit: signedDecimalString,
    bundleIndex: z.number().int(),
    beneficiary: addressOut.nullable(),
    entryPoint: addressOut,
  })
  .meta({ id: 'Bundle' });
export type Bundle = z.infer<typeof bundleSchema>;

/** getTopPaymasters item. */
export const paymasterSummarySchema = z
  .object({
    userOpsLength: decimalString,
    address: addressOut,
    gasSponsored: decimalString,
    network: z.string(),
    totalDeposits: decimalString,
  })
  .meta({ id: 'PaymasterSummary' });
export type PaymasterSummary = z.infer<typeof paymasterSummarySchema>;

/** getTopFactories item. */
export const factorySummarySchema = z
  .object({
    address: addressOut,
    accountsLength: decimalString,
    network: z.string(),
  })
  .meta({ id: 'FactorySummary' });
export type FactorySummary = z.infer<typeof factorySummarySchema>;

export const factoryDetailsSchema = z
  .object({
    address: addressOut,
    accountsLength: decimalString,
    network: z.string(),
    accounts: z.array(
      z.object({
        address: addressOut,
        blockTime: decimalString,
        blockNumber: decimalString,
        userOpsCount: decimalString,
        /** As UserOp.implementation. */
        implementation: z.string().nullable(),
      }),
    ),
  })
  .meta({ id: 'FactoryDetails' });
export type FactoryDetails = z.infer<typeof factoryDetailsSchema>;

export const bundlerDetailsSchema = z
  .object({
    address: addressOut,
    userOpsLength: decimalString,
    userOps: z.array(bundlerUserOpSchema),
  })
  .meta({ id: 'BundlerDetails' });
export type BundlerDetails = z.infer<typeof bundlerDetailsSchema>;

/** getTopBundlers item as real clients read it (contract.md §3.4). */
export const bundlerSummarySchema = z
  .object({
    address: addressOut,
    userOpsLength: decimalString,
    bundleLength: decimalString,
    actualGasCostSum: decimalString,
    transactionFeeSum: decimalString,
    /** Over the asked window (`days`, every day without it): Σ its ops' actualGasCost (wei). */
    revenue: decimalString,
    /** Over the same window: Σ its bundle transactions' fees (wei). */
    fee: decimalString,
    /** revenue − fee; may be negative. */
    profit: signedDecimalString,
    id: z.string(),
  })
  .meta({ id: 'BundlerSummary' });
export type BundlerSummary = z.infer<typeof bundlerSummarySchema>;

export const dailyMetricSchema = z
  .object({
    userOpsDaily: decimalString,
    bundleDaily: decimalString,
    walletsCreatedDaily: decimalString,
    gasCostCollectedDaily: decimalString,
    /** What the day's bundlers earned (wei): gasCostCollectedDaily less their bundle transactions' fees; may be negative. */
    bundlerProfitDaily: signedDecimalString,
    userOpsTotal: decimalString,
    bundlesTotal: decimalString,
    walletsCreatedTotal: decimalString,
    gasCostCollectedTotal: decimalString,
    activeWallets: z.array(addressOut),
    activeWalletsDaily: decimalString,
    daySinceEpoch: decimalString,
    paymasterTotal: decimalString,
    factoryTotal: decimalString,
    bundlerTotal: decimalString,
  })
  .meta({ id: 'DailyMetric' });
export type DailyMetric = z.infer<typeof dailyMetricSchema>;
