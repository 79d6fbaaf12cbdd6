import { z } from 'zod';
import * as delegations from '../../shared/db/tables/delegations.js';
import { accountDelegationsSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

export const getAccountDelegations = defineEndpoint({
  summary: "An address's EIP-7702 delegate and the authorizations it signed, newest first.",
  description:
    '`current` is the delegate its latest effective authorization set (null when none did, or that one cleared it). ' +
    '`history` lists its authorizations (`first`, `skip` page it), those that did not take effect included with why (`status`). ' +
    "Which transactions are read is the indexer's INDEXER_DELEGATIONS: under `ops` only bundle transactions, so an EOA's own " +
    'type-4 transactions are missing; under `all` every one.',
  tag: 'Account',
  input: z.object({ address: addressInput, network: defaultedNetworkInput, ...pageInput }),
  output: accountDelegationsSchema,
  cache: 'head',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const [current, history] = await Promise.all([
      delegations.currentDelegates(ctx.db, network.chainId, [input.address]),
      delegations.listByAuthority(ctx.db, network.chainId, input.address, input),
    ]);
    return {
      current: current.get(input.address) ?? null,
      history: history.map((d) => ({
        delegate: d.delegate,
        blockNumber: String(d.blockNumber),
        blockTime: String(d.blockTime),
        transactionHash: d.transactionHash,
        authorizationNonce: d.authorizationNonce,
        authorizationChainId: d.authorizationChainId,
        viaUserOp: d.viaUserOp,
        status: d.status,
      })),
    };
  },
});
