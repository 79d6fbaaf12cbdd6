import { z } from 'zod';
import * as accounts from '../../shared/db/tables/accounts.js';
import * as delegations from '../../shared/db/tables/delegations.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { accountDetailSchema } from '../../shared/models/index.js';
import { accountModules } from './accountModules.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getAddressActivity = defineEndpoint({
  summary: "An account's deployment, counts, deposit and latest user operations (as sender), newest first.",
  description:
    'Every address answers an `accountDetail` (clients read it unguarded): an unknown one has no ops and null deployment fields.',
  tag: 'Account',
  input: z.object({ address: addressInput, network: defaultedNetworkInput, ...pageInput }),
  output: z.object({ accountDetail: accountDetailSchema }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const [{ account, totalDeposit }, ops, { modules }, delegates] = await Promise.all([
      accounts.findWithDeposit(ctx.db, network.chainId, input.address),
      userOps.listBySender(ctx.db, network.chainId, input.address, input),
      accountModules(ctx.db, network.chainId, input.address),
      delegations.currentDelegates(ctx.db, network.chainId, [input.address]),
    ]);
    return {
      accountDetail: {
        id: input.address,
        address: input.address,
        network: network.name,
        userOpsCount: account?.userOpsCount ?? '0',
        userOps: ops,
        factory: account?.factory ?? null,
        userOpHash: account?.createdUserOpHash ?? null,
        transactionHash: account?.createdTxHash ?? null,
        blockNumber: account?.createdBlockNumber ?? null,
        blockTime: account?.createdBlockTime ?? null,
        totalDeposits: totalDeposit ?? '0',
        implementation: account?.implementation ?? null,
        modules,
        delegation: delegates.get(input.address) ?? null,
      },
    };
  },
});
