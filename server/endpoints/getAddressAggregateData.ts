import { z } from 'zod';
import * as userOps from '../../shared/db/tables/userOps.js';
import { erc20TransferSchema, nftTransferSchema, transactionSchema, userOpSchema } from '../../shared/models/index.js';
import { acrossNetworks, listErc20Transfers, listNftTransfers, listTransactions } from './addressData.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, indexedNetworks, everyNetworkInput, pageInput } from './inputs.js';

const ARRAYS = ['userOps', 'transactions', 'erc20Transfers', 'erc721Transfers'] as const;
type ArrayName = (typeof ARRAYS)[number];
const FILTER_MESSAGE = `must be a comma list of ${ARRAYS.join(', ')}`;

/** Which arrays to fill: a comma list of their names (any case); absent = all four. */
const filterInput = z
  .string({ error: FILTER_MESSAGE })
  .max(200, FILTER_MESSAGE)
  .transform((raw, ctx) => {
    const names = raw
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean);
    const picked = ARRAYS.filter((a) => names.includes(a.toLowerCase()));
    if (names.length === 0 || picked.length !== new Set(names).size) {
      ctx.addIssue({ code: 'custom', message: FILTER_MESSAGE });
      return z.NEVER;
    }
    return picked.join(',');
  })
  .optional()
  .describe(`Which arrays to fill, as a comma list of ${ARRAYS.join(', ')} (default: all). The others answer [].`);

const timeOf = (iso: string) => Date.parse(iso) / 1000;

export const getAddressAggregateData = defineEndpoint({
  summary: "An address's user operations, transactions, ERC-20 transfers and NFT transfers in one call.",
  description:
    '`filter` picks the arrays to fill (comma list of userOps, transactions, erc20Transfers, erc721Transfers; default all); ' +
    'the others are empty. Without `network` every indexed network is merged, newest first. `first`/`skip` page each array.',
  tag: 'Account',
  input: z.object({ address: addressInput, network: everyNetworkInput, filter: filterInput, ...pageInput }),
  output: z.object({
    userOps: z.array(userOpSchema),
    transactions: z.array(transactionSchema),
    erc20Transfers: z.array(erc20TransferSchema),
    erc721Transfers: z.array(nftTransferSchema),
  }),
  cache: 'head',
  async handler(ctx, input) {
    const networks = indexedNetworks(ctx, input.network);
    const wanted = new Set<ArrayName>(input.filter ? (input.filter.split(',') as ArrayName[]) : ARRAYS);
    const page = { first: input.first, skip: input.skip };
    const when = <T>(name: ArrayName, load: () => Promise<T[]>): Promise<T[]> => (wanted.has(name) ? load() : Promise.resolve([]));
    const [ops, transactions, erc20Transfers, erc721Transfers] = await Promise.all([
      when('userOps', () =>
        acrossNetworks(
          networks,
          page,
          (n, p) => userOps.listBySender(ctx.db, n.chainId, input.address, p),
          (op) => Number(op.blockTime),
        ),
      ),
      when('transactions', () =>
        acrossNetworks(
          networks,
          page,
          (n, p) => listTransactions(ctx, n, input.address, p),
          (tx) => timeOf(tx.block_signed_at),
        ),
      ),
      when('erc20Transfers', () =>
        acrossNetworks(
          networks,
          page,
          (n, p) => listErc20Transfers(ctx, n, input.address, p),
          (t) => timeOf(t.metadata.blockTimestamp),
        ),
      ),
      when('erc721Transfers', () =>
        acrossNetworks(
          networks,
          page,
          (n, p) => listNftTransfers(ctx, n, input.address, p),
          (t) => timeOf(t.metadata.blockTimestamp),
        ),
      ),
    ]);
    return { userOps: ops, transactions, erc20Transfers, erc721Transfers };
  },
});
