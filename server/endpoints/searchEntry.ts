import { z } from 'zod';
import type { NetworkConfig } from '../../shared/config.js';
import * as accounts from '../../shared/db/tables/accounts.js';
import * as bundleTransactions from '../../shared/db/tables/bundleTransactions.js';
import * as entityStats from '../../shared/db/tables/entityStats.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { AppError } from '../../shared/errors.js';
import { searchResultSchema, type SearchType } from '../../shared/models/index.js';
import type { Ctx } from '../context.js';
import { defineEndpoint } from './defineEndpoint.js';
import { indexedNetworks, everyNetworkInput } from './inputs.js';

const ENTRY_MESSAGE = 'must be an address (0x + 40 hex), a hash (0x + 64 hex) or a block number';

const entryInput = z
  .string({ error: ENTRY_MESSAGE })
  .trim()
  .regex(/^(0x[0-9a-fA-F]{40}|0x[0-9a-fA-F]{64}|\d{1,15})$/, ENTRY_MESSAGE)
  .transform((entry) => entry.toLowerCase())
  .describe('An address, a user operation or transaction hash, or a block number.');

/** What `entry` is on one network, most specific first. */
async function matchesOn(ctx: Ctx, network: NetworkConfig, entry: string): Promise<SearchType[]> {
  const { chainId } = network;
  if (entry.length === 66) {
    const [isOp, isBundle] = await Promise.all([userOps.exists(ctx.db, chainId, entry), bundleTransactions.exists(ctx.db, chainId, entry)]);
    return [...(isOp ? (['userOpHash'] as const) : []), ...(isBundle ? (['bundle'] as const) : [])];
  }
  if (entry.length === 42) {
    const [account, kinds] = await Promise.all([accounts.find(ctx.db, chainId, entry), entityStats.listKindsOf(ctx.db, chainId, entry)]);
    const roles = (['paymaster', 'bundler', 'factory'] as const).filter((kind) => kinds.includes(kind));
    return [...(account ? (['account'] as const) : []), ...roles];
  }
  const state = (await ctx.services.indexer.current()).get(chainId);
  return state && Number(entry) >= state.startBlock && Number(entry) <= state.indexedBlock ? ['block'] : [];
}

export const searchEntry = defineEndpoint({
  summary: 'What a search term is (user op, bundle, account, paymaster, bundler, factory, block) and on which network.',
  description:
    'Needs no API key (explorers call it from the browser without one). Without `network` every indexed network is ' +
    'searched; `foundInNetwork`/`type` is the first match, `matches` lists all. No match is a 404 with a `message`.',
  tag: 'User Operations',
  auth: 'none',
  input: z.object({ entry: entryInput, network: everyNetworkInput }),
  output: searchResultSchema,
  cache: 'head',
  async handler(ctx, input) {
    const networks = indexedNetworks(ctx, input.network);
    const found = await Promise.all(networks.map((n) => matchesOn(ctx, n, input.entry)));
    const matches = networks.flatMap((n, i) => found[i]!.map((type) => ({ network: n.name, type })));
    const first = matches[0];
    if (!first) {
      throw new AppError('NOT_FOUND', `Nothing indexed matches "${input.entry}"`, { param: 'entry' });
    }
    return { term: input.entry, foundInNetwork: first.network, type: first.type, matches };
  },
});
