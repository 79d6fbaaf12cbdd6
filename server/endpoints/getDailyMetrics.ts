import { z } from 'zod';
import * as dailyStats from '../../shared/db/tables/dailyStats.js';
import { dailyMetricSchema } from '../../shared/models/index.js';
import { closedDayWalletsOf } from './closedDayWallets.js';
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
    // Closed days' wallets this process already holds are not read again (./closedDayWallets.ts).
    const closedDays = closedDayWalletsOf(ctx.db);
    const { held, texts } = closedDays.held(chainId);
    const { epoch, days } = await dailyStats.listRecent(ctx.db, chainId, input.noOfDays, { held });
    closedDays.keep(chainId, epoch, days);
    const heldKeys: string[] = [];
    const metrics = days.map(({ counts, activeWalletsJson }) => {
      if (activeWalletsJson !== null) return dailyStats.dailyMetric(counts, activeWalletsJson);
      const key = dailyStats.walletListKey(counts.daySinceEpoch, counts.activeWalletsDaily);
      heldKeys.push(key);
      return dailyStats.dailyMetric(counts, texts.get(key)!);
    });
    closedDays.touch(chainId, heldKeys);
    return { metrics };
  },
});
