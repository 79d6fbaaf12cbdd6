import { z } from 'zod';
import { isNamed } from '../../shared/accountImplementations.js';
import { accountFamily } from '../../shared/calldata/accountCalls.js';
import * as bundles from '../../shared/db/tables/bundles.js';
import * as dailyStats from '../../shared/db/tables/dailyStats.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { bundleSchema, dailyMetricSchema, userOpSchema, writeFailureSchema } from '../../shared/models/index.js';
import * as userOpTraces from '../../shared/db/tables/userOpTraces.js';
import { diagnoseFailure, failureInWords } from '../opFailure.js';
import { defineEndpoint } from './defineEndpoint.js';
import { networkStatusOf } from './getNetworkStatus.js';
import { indexedNetworks, everyNetworkInput } from './inputs.js';

/** What the status page at `/` shows: a few of the latest items and a month of daily metrics. */
const LATEST = 8;
const DAYS = 30;

const networkSummarySchema = z.object({
  network: z.string(),
  chainId: z.number().int(),
  headBlock: z.number().int(),
  indexedBlock: z.number().int(),
  lagBlocks: z.number().int(),
  startBlock: z.number().int().nullable(),
  backfillComplete: z.boolean(),
  /** Share of the blocks from startBlock to the head that are indexed (0–1). */
  backfillProgress: z.number(),
  writeFailure: writeFailureSchema.nullable(),
  latestUserOps: z.array(
    userOpSchema
      .pick({
        userOpHash: true,
        sender: true,
        success: true,
        blockNumber: true,
        blockTime: true,
        actualGasCost: true,
        entryPointVersion: true,
        implementation: true,
      })
      .extend({
        /**
         * What account sent it: its implementation when the indexer has named it ("Kernel v3.1"),
         * else the family its callData's method suggests (and the 7702 flag): "Safe", "EIP-7702 SimpleAccount-style"…
         */
        account: z.string(),
        /** Why a failed op failed, in words ("Panic: arithmetic overflow in transfer() at depth 2"); null when it succeeded. */
        failure: z.string().nullable(),
      }),
  ),
  latestBundles: z.array(
    bundleSchema.pick({ transactionHash: true, userOpsLength: true, from: true, blockNumber: true, blockTime: true, status: true }),
  ),
  dailyMetrics: z.array(
    dailyMetricSchema.pick({ daySinceEpoch: true, userOpsDaily: true, activeWalletsDaily: true, gasCostCollectedDaily: true }),
  ),
});

export const getStatusSummary = defineEndpoint({
  summary: "The public status view: per network the indexer's position, the latest user ops and bundles, 30 days of metrics.",
  description:
    'Needs no API key (the status page at `/` reads it from the browser) and is rate-limited per client address. ' +
    `The same rows as getNetworkStatus, getLatestUserOps, getLatestBundles (${LATEST} of each) and getDailyMetrics ` +
    `(noOfDays ${DAYS}), trimmed to the fields the page shows; without \`network\` every indexed network.`,
  tag: 'Supported Networks',
  auth: 'none',
  input: z.object({ network: everyNetworkInput }),
  output: z.object({ networks: z.array(networkSummarySchema) }),
  cache: 'head',
  async handler(ctx, input) {
    const states = await ctx.services.indexer.current();
    const summaries = indexedNetworks(ctx, input.network).map(async (network) => {
      const state = states.get(network.chainId);
      const [ops, latestBundles, recent] = await Promise.all([
        userOps.listLatest(ctx.db, network.chainId, { first: LATEST, skip: 0 }),
        bundles.listLatest(ctx.db, network.chainId, { first: LATEST, skip: 0 }),
        dailyStats.listRecent(ctx.db, network.chainId, DAYS, false),
      ]);
      const failedHashes = ops.filter((o) => !o.success).map((o) => o.userOpHash);
      // The stored traces only: the page polls, and never makes the node trace.
      const [failures, traces] = await Promise.all([
        userOps.listFailures(ctx.db, network.chainId, failedHashes),
        userOpTraces.findMany(ctx.db, network.chainId, failedHashes),
      ]);
      const failureOf = (hash: string): string | null => {
        const stored = failures.get(hash);
        const failure = stored ? diagnoseFailure(stored, traces.get(hash) ?? null) : null;
        return failure ? failureInWords(failure) : null;
      };
      const position = networkStatusOf(network, state);
      const startBlock = state?.startBlock ?? null;
      const span = startBlock === null ? 0 : position.headBlock - startBlock + 1;
      const done = startBlock === null ? 0 : position.indexedBlock - startBlock + 1;
      return {
        ...position,
        startBlock,
        backfillProgress: span > 0 ? Math.min(1, Math.max(0, done / span)) : 0,
        // Only the fields the page shows: it polls this every few seconds.
        latestUserOps: ops.map((o) => ({
          userOpHash: o.userOpHash,
          sender: o.sender,
          success: o.success,
          blockNumber: o.blockNumber,
          blockTime: o.blockTime,
          actualGasCost: o.actualGasCost,
          entryPointVersion: o.entryPointVersion,
          implementation: o.implementation,
          account: isNamed(o.implementation)
            ? o.implementation
            : `${o.eip7702 ? 'EIP-7702 ' : ''}${accountFamily(o.preDecodedCallData) ?? 'unknown'}`,
          failure: failureOf(o.userOpHash),
        })),
        latestBundles: latestBundles.map((b) => ({
          transactionHash: b.transactionHash,
          userOpsLength: b.userOpsLength,
          from: b.from,
          blockNumber: b.blockNumber,
          blockTime: b.blockTime,
          status: b.status,
        })),
        dailyMetrics: recent.days.map(({ counts: d }) => ({
          daySinceEpoch: d.daySinceEpoch,
          userOpsDaily: d.userOpsDaily,
          activeWalletsDaily: d.activeWalletsDaily,
          gasCostCollectedDaily: d.gasCostCollectedDaily,
        })),
      };
    });
    return { networks: await Promise.all(summaries) };
  },
});
