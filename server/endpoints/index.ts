import type { z } from 'zod';
import type { Ctx } from '../context.js';
import type { Answer } from '../cache/responseCache.js';
import type { Dialect } from '../dialects/dialect.js';
import { answerValue, runEndpoint, type Presenter } from './runEndpoint.js';
import { getNetworks } from './getNetworks.js';
import { getAccountDelegations } from './getAccountDelegations.js';
import { getAddressActivity } from './getAddressActivity.js';
import { getAccountModules } from './getAccountModules.js';
import { getTopModules } from './getTopModules.js';
import { getAddressAggregateData } from './getAddressAggregateData.js';
import { getAddressBalances } from './getAddressBalances.js';
import { getAddressERC20Transfers } from './getAddressERC20Transfers.js';
import { getAddressNFTTransfers } from './getAddressNFTTransfers.js';
import { getAddressTransactions } from './getAddressTransactions.js';
import { getBlockActivity } from './getBlockActivity.js';
import { getBundleActivity } from './getBundleActivity.js';
import { getBundlerActivity } from './getBundlerActivity.js';
import { getDailyMetrics } from './getDailyMetrics.js';
import { getFactoryDetails } from './getFactoryDetails.js';
import { getGlobalCounts } from './getGlobalCounts.js';
import { getLatestBundles } from './getLatestBundles.js';
import { getLatestUserOps } from './getLatestUserOps.js';
import { getLogFromIndex } from './getLogFromIndex.js';
import { getNetworkStatus } from './getNetworkStatus.js';
import { getStatusSummary } from './getStatusSummary.js';
import { getPaymasterActivity } from './getPaymasterActivity.js';
import { getTopBundlers } from './getTopBundlers.js';
import { getTopFactories } from './getTopFactories.js';
import { getTopPaymasters } from './getTopPaymasters.js';
import { getUserOp } from './getUserOp.js';
import { getUserOpLogs } from './getUserOpLogs.js';
import { getUserOpMetadata } from './getUserOpMetadata.js';
import { searchEntry } from './searchEntry.js';
import { getPrices } from './getPrices.js';
import { getUserOpTraces } from './getUserOpTraces.js';
import { getTrxTraces } from './getTrxTraces.js';
import { createWebhook } from './createWebhook.js';
import { listWebhooks } from './listWebhooks.js';
import { deleteWebhook } from './deleteWebhook.js';
import { getWebhookDeliveries } from './getWebhookDeliveries.js';
import { replayWebhookDelivery } from './replayWebhookDelivery.js';
import { testWebhook } from './testWebhook.js';

/** The single registry: key = REST path `/v0/<key>` = tRPC procedure name. */
export const endpoints = {
  getNetworks,
  getAccountDelegations,
  getAddressActivity,
  getAccountModules,
  getTopModules,
  getAddressAggregateData,
  getAddressBalances,
  getAddressERC20Transfers,
  getAddressNFTTransfers,
  getAddressTransactions,
  getBlockActivity,
  getBundleActivity,
  getBundlerActivity,
  getDailyMetrics,
  getFactoryDetails,
  getGlobalCounts,
  getLatestBundles,
  getLatestUserOps,
  getLogFromIndex,
  getNetworkStatus,
  getStatusSummary,
  getPaymasterActivity,
  getTopBundlers,
  getTopFactories,
  getTopPaymasters,
  getUserOp,
  getUserOpLogs,
  getUserOpMetadata,
  searchEntry,
  getPrices,
  getUserOpTraces,
  getTrxTraces,
  createWebhook,
  listWebhooks,
  deleteWebhook,
  getWebhookDeliveries,
  replayWebhookDelivery,
  testWebhook,
};

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;
export type OutputOf<K extends EndpointName> = z.input<Endpoints[K]['output']>;

/**
 * How `dialect` presents endpoint `name`. An endpoint the dialect does not reshape answers as the
 * spec does, from the same cache entries; a reshaped one has entries of its own.
 */
function presenterOf(dialect: Dialect | undefined, name: EndpointName): Presenter | undefined {
  const presentation = dialect?.presentations[name];
  if (!presentation) return undefined;
  // The answer passed in is this endpoint's spec answer (runEndpoint computed it with its handler).
  return {
    namespace: `${dialect.name}:`,
    present: (value, ctx) => presentation.present(value as never, ctx),
    ...(presentation.notFound ? { notFound: presentation.notFound.bind(presentation) } : {}),
  };
}

/**
 * Runs a procedure call (server/endpoints/runEndpoint.ts), answered in `dialect`'s shapes (default:
 * the spec's); REST writes the answer's JSON text as is.
 */
export function answerEndpoint(ctx: Ctx, name: EndpointName, rawInput: unknown, dialect?: Dialect): Promise<Answer> {
  return runEndpoint(ctx, { name, endpoint: endpoints[name], presenter: presenterOf(dialect, name) }, rawInput);
}

/** The answer as a value (tRPC, tests); typed by the caller, who knows the dialect. */
export async function callEndpoint<K extends EndpointName, TOutput = OutputOf<K>>(
  ctx: Ctx,
  name: K,
  rawInput: unknown,
  dialect?: Dialect,
): Promise<TOutput> {
  return answerValue(await answerEndpoint(ctx, name, rawInput, dialect)) as TOutput;
}
