import { z } from 'zod';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { bundlerDetailsSchema, bundlerSummarySchema } from '../../shared/models/index.js';
import { toBundlerUserOp } from './bundlerOps.js';
import { defineEndpoint } from './defineEndpoint.js';
import { servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';
import { ZERO_ADDRESS } from '../../shared/chain/constants.js';

export const getTopBundlers = defineEndpoint({
  summary: 'Bundlers ranked by user operations submitted (ties by address).',
  description:
    "`bundlers` is the ranked page (what explorers read). The spec's `bundlerDetails` is answered beside it: the first " +
    'bundler of the page with its latest ops (up to `first`), or the zero address with no ops when there is none.',
  tag: 'Bundler',
  input: z.object({ network: defaultedNetworkInput, ...pageInput }),
  output: z.object({ bundlerDetails: bundlerDetailsSchema, bundlers: z.array(bundlerSummarySchema) }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const top = await entityStats.listTopByUserOps(ctx.db, network.chainId, 'bundler', input);
    const leader = top[0];
    const ops = leader ? await userOps.listByBundler(ctx.db, network.chainId, leader.address, { first: input.first, skip: 0 }) : [];
    return {
      bundlerDetails: {
        address: leader?.address ?? ZERO_ADDRESS,
        userOpsLength: leader?.userOpsCount ?? '0',
        userOps: ops.map(toBundlerUserOp),
      },
      bundlers: top.map((b) => ({
        address: b.address,
        userOpsLength: b.userOpsCount,
        bundleLength: b.bundlesCount,
        actualGasCostSum: b.actualGasCostSum,
        transactionFeeSum: b.txFeeSum,
        id: b.address,
      })),
    };
  },
});
