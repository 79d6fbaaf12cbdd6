import { z } from 'zod';
import * as dailyStats from '../../shared/db/tables/dailyStats.js';
import { dailyMetricSchema } from '../../shared/models/index.js';
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
    const network = servedNetwork(ctx, input.network);
    return { metrics: await dailyStats.listRecent(ctx.db, network.chainId, input.noOfDays) };
  },
});
