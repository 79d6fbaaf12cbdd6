import { z } from 'zod';
import * as dailyStats from '../../shared/db/tables/dailyStats.js';
import { dailyMetricSchema } from '../../shared/models/index.js';
import { dayWalletListsOf } from './dayWalletLists.js';
import { defineEndpoint } from './defineEndpoint.js';
import { servedNetwork, defaultedNetworkInput, noOfDaysInput } from './inputs.js';

export const getDailyMetrics = defineEndpoint({
  summary: 'Per-day metrics with running totals, newest first.',
  description:
    'The `noOfDays` UTC days (default 7, at most 366) ending with the latest day that had activity; days without ' +
    'activity are skipped. `metrics[0]` is the latest day, its `*Total` fields the network totals.',
  tag: 'Metrics',
  input: z.object({ network: defaultedNetworkInput, noOfDays: noOfDaysInput }),
  output: z.object({ metrics: z.array(dailyMetricSchema) }),
  cache: 'head',
  async handler(ctx, input) {
    const { chainId } = servedNetwork(ctx, input.network);
    // Lists this process already holds are not read again (./dayWalletLists.ts).
    const lists = dayWalletListsOf(ctx.db);
    const { held, lists: heldLists } = lists.held(chainId);
    const { epoch, days } = await dailyStats.listRecent(ctx.db, chainId, input.noOfDays, { held });
    lists.keep(chainId, epoch, days);
    const heldDays: string[] = [];
    const metrics = days.map(({ counts, activeWalletsJson }) => {
      if (activeWalletsJson !== null) return dailyStats.dailyMetric(counts, activeWalletsJson);
      heldDays.push(counts.daySinceEpoch);
      return dailyStats.dailyMetric(counts, heldLists.get(counts.daySinceEpoch)!);
    });
    lists.touch(chainId, heldDays);
    return { metrics };
  },
});
