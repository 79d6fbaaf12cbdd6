import { z } from 'zod';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import * as entryPointDeposits from '../../shared/db/tables/entryPointDeposits.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { paymasterDetailSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getPaymasterActivity = defineEndpoint({
  summary: "A paymaster's totals (ops sponsored, gas sponsored, deposit) and the latest ops it paid for, newest first.",
  description: 'An address that never sponsored an op answers zero totals and no ops.',
  tag: 'Paymaster',
  input: z.object({ address: addressInput, network: defaultedNetworkInput, ...pageInput }),
  output: z.object({ paymasterDetail: paymasterDetailSchema }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const [stats, ops, deposits] = await Promise.all([
      entityStats.find(ctx.db, network.chainId, 'paymaster', input.address),
      userOps.listByPaymaster(ctx.db, network.chainId, input.address, input),
      entryPointDeposits.latestTotalDeposits(ctx.db, network.chainId, [input.address]),
    ]);
    return {
      paymasterDetail: {
        id: input.address,
        address: input.address,
        network: network.name,
        userOpsLength: stats?.userOpsCount ?? '0',
        gasSponsored: stats?.actualGasCostSum ?? '0',
        totalDeposits: deposits.get(input.address) ?? '0',
        userOps: ops,
      },
    };
  },
});
