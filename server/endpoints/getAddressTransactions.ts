import { z } from 'zod';
import { transactionSchema } from '../../shared/models/index.js';
import { listTransactions } from './addressData.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getAddressTransactions = defineEndpoint({
  summary: 'The bundle transactions an address took part in (as op sender, bundler, call target or transfer party), newest first.',
  description:
    'Answers a top-level array of Transaction, as the spec defines it (some clients expect `{transactions}`: the spec wins). ' +
    'Known contracts (EntryPoints, canonical factories) are labelled; quotes are null without a price source.',
  tag: 'Account',
  input: z.object({ address: addressInput, network: defaultedNetworkInput, ...pageInput }),
  output: z.array(transactionSchema),
  cache: 'head',
  async handler(ctx, input) {
    return listTransactions(ctx, servedNetwork(ctx, input.network), input.address, input);
  },
});
