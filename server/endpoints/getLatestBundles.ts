import { z } from 'zod';
import * as bundles from '../../shared/db/tables/bundles.js';
import { bundleSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getLatestBundles = defineEndpoint({
  summary: 'The latest bundles of a network, newest first, with their ops and transaction sender, status and fee.',
  description:
    'One item per bundle (a transaction may carry several). `from` is the bundler, `status` "1" for a successful ' +
    'transaction, `transactionFee` the wei the transaction paid.',
  tag: 'Bundler',
  input: z.object({ network: defaultedNetworkInput, ...pageInput }),
  output: z.object({ bundles: z.array(bundleSchema) }),
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    return { bundles: await bundles.listLatest(ctx.db, network.chainId, input) };
  },
});
