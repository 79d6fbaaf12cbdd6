import { z } from 'zod';
import * as bundlerDays from '../../shared/db/tables/bundlerDays.js';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { bundlerDetailsSchema, bundlerSummarySchema } from '../../shared/models/index.js';
import { toBundlerUserOp } from './bundlerOps.js';
import { defineEndpoint } from './defineEndpoint.js';
import { servedNetwork, defaultedNetworkInput, pageInput, windowDaysInput } from './inputs.js';
import { ZERO_ADDRESS } from '../../shared/chain/constants.js';

export const getTopBundlers = defineEndpoint({
  summary: 'Bundlers ranked by user operations submitted (ties by address).',
  description:
    "`bundlers` is the ranked page (what explorers read). The spec's `bundlerDetails` is answered beside it: the first " +
    'bundler of the page with its latest ops (up to `first`), or the zero address with no ops when there is none. ' +
    "Each bundler's `revenue` (its ops' actualGasCost), `fee` (its bundle transactions' fees) and `profit` (revenue − fee) " +
    'are totals over the `days` UTC days ending with the latest day that had activity, or over every day without `days`.',
  tag: 'Bundler',
  input: z.object({ network: defaultedNetworkInput, ...pageInput, days: windowDaysInput }),
  output: z.object({ bundlerDetails: bundlerDetailsSchema, bundlers: z.array(bundlerSummarySchema) }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const top = await entityStats.listTopByUserOps(ctx.db, network.chainId, 'bundler', input);
    const leader = top[0];
    const earned = await bundlerDays.totals(
      ctx.db,
      network.chainId,
      top.map((b) => b.address),
      input.days ?? null,
    );
    const ops = leader ? await userOps.listByBundler(ctx.db, network.chainId, leader.address, { first: input.first, skip: 0 }) : [];
    return {
      bundlerDetails: {
        address: leader?.address ?? ZERO_ADDRESS,
        userOpsLength: leader?.userOpsCount ?? '0',
        userOps: ops.map(toBundlerUserOp),
      },
      bundlers: top.map((b) => {
        const { revenue, fees } = earned.get(b.address) ?? { revenue: '0', fees: '0' };
        return {
          address: b.address,
          userOpsLength: b.userOpsCount,
          bundleLength: b.bundlesCount,
          actualGasCostSum: b.actualGasCostSum,
          transactionFeeSum: b.txFeeSum,
          revenue,
          fee: fees,
          profit: (BigInt(revenue) - BigInt(fees)).toString(),
          id: b.address,
        };
      }),
    };
  },
});
