import { z } from 'zod';
import { erc20TransferSchema } from '../../shared/models/index.js';
import { listErc20Transfers } from './addressData.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getAddressERC20Transfers = defineEndpoint({
  summary: 'ERC-20 transfers from or to an address inside indexed user operations, newest first.',
  description:
    'Answers a top-level array of ERC20Transfer, as the spec defines it (some clients expect `{erc20Transfers}`: the ' +
    'spec wins). `value` is in whole tokens; `rawContract.value` is the exact amount in hex.',
  tag: 'Account',
  input: z.object({ address: addressInput, network: defaultedNetworkInput, ...pageInput }),
  output: z.array(erc20TransferSchema),
  cache: 'head',
  async handler(ctx, input) {
    return listErc20Transfers(ctx, servedNetwork(ctx, input.network), input.address, input);
  },
});
