import { z } from 'zod';
import * as bundleTransactions from '../../shared/db/tables/bundleTransactions.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { bundleDetailsSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { hashInput, networkHolding, pageInput, searchedNetworkInput, servedNetwork } from './inputs.js';

export const getBundleActivity = defineEndpoint({
  summary: 'A bundle transaction (sender, status, fee) and its user operations, newest first.',
  description:
    '`bundle` is the transaction hash. A transaction not indexed (yet) answers 200 with no ops and null block fields: ' +
    'clients poll until `userOps` is non-empty. `status` is "1" for a successful transaction.',
  tag: 'User Operations',
  input: z.object({ bundle: hashInput, network: searchedNetworkInput, ...pageInput }),
  output: z.object({ bundleDetails: bundleDetailsSchema }),
  cache: {
    finalWhen: ({ bundleDetails: b }) => (b.blockNumber === null ? [] : [{ network: b.network, blockNumber: b.blockNumber }]),
  },
  async handler(ctx, input) {
    // A transaction not indexed (yet) on any network is answered empty on the default one (clients poll).
    const network =
      (await networkHolding(ctx, input.network, (n) => bundleTransactions.exists(ctx.db, n.chainId, input.bundle))) ??
      servedNetwork(ctx, undefined);
    const [tx, ops] = await Promise.all([
      bundleTransactions.findByHash(ctx.db, network.chainId, input.bundle),
      userOps.listByTransaction(ctx.db, network.chainId, input.bundle, input),
    ]);
    return {
      bundleDetails: {
        transactionHash: input.bundle,
        network: network.name,
        userOpsLength: String(tx?.userOpsCount ?? 0),
        blockNumber: tx?.blockNumber ?? null,
        blockTime: tx?.blockTime ?? null,
        from: tx?.from ?? null,
        to: tx?.to ?? null,
        status: tx ? (tx.status ? ('1' as const) : ('0' as const)) : null,
        transactionFee: tx?.fee ?? null,
        l1Fee: tx?.l1Fee ?? null,
        userOps: ops,
      },
    };
  },
});
