import { z } from 'zod';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import { paymasterSummarySchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getTopPaymasters = defineEndpoint({
  summary: 'Paymasters ranked by user operations sponsored (ties by address), with gas sponsored and deposit.',
  description:
    '`gasSponsored` is Σ actualGasCost of its ops (wei); `totalDeposits` its EntryPoint deposit after its latest Deposited event.',
  tag: 'Paymaster',
  input: z.object({ network: defaultedNetworkInput, ...pageInput }),
  output: z.object({ paymasters: z.array(paymasterSummarySchema) }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const top = await entityStats.listTopByUserOpsWithDeposits(ctx.db, network.chainId, 'paymaster', input);
    return {
      paymasters: top.map((p) => ({
        userOpsLength: p.userOpsCount,
        address: p.address,
        gasSponsored: p.actualGasCostSum,
        network: network.name,
        totalDeposits: p.totalDeposit ?? '0',
      })),
    };
  },
});
