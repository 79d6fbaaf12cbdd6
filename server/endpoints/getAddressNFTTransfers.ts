import { z } from 'zod';
import { nftTransferSchema } from '../../shared/models/index.js';
import { listNftTransfers } from './addressData.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getAddressNFTTransfers = defineEndpoint({
  summary: 'ERC-721 and ERC-1155 transfers from or to an address inside indexed user operations, newest first.',
  description:
    'Answers a top-level array of NFTTransfer, as the spec defines it (some clients expect `{erc721Transfers}`: the ' +
    'spec wins). `category` tells erc721 from erc1155; `value` is the amount (1 for ERC-721).',
  tag: 'Account',
  input: z.object({ address: addressInput, network: defaultedNetworkInput, ...pageInput }),
  output: z.array(nftTransferSchema),
  cache: 'head',
  async handler(ctx, input) {
    return listNftTransfers(ctx, servedNetwork(ctx, input.network), input.address, input);
  },
});
