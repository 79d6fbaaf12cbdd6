import { z } from 'zod';
import * as tokens from '../../shared/db/tables/tokens.js';
import { balanceSchema, type Balance } from '../../shared/models/index.js';
import type { Ctx } from '../context.js';
import { nativeCurrency, prettyUsd } from '../prices.js';
import { defineEndpoint } from './defineEndpoint.js';
import { addressInput, servedNetwork, defaultedNetworkInput, pageInput } from './inputs.js';

/** Covalent's placeholder address of a chain's native currency. */
const NATIVE_ADDRESS = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

async function priced(ctx: Ctx, item: Omit<Balance, 'quote_rate' | 'pretty_quote' | 'quote'>): Promise<Balance> {
  const rate = item.contract_ticker_symbol ? await ctx.services.prices.usd(item.contract_ticker_symbol) : null;
  if (rate === null) return { ...item, quote_rate: null, pretty_quote: null, quote: null };
  const quote = (Number(item.balance) / 10 ** item.contract_decimals) * rate;
  return { ...item, quote_rate: String(rate), pretty_quote: prettyUsd(quote), quote };
}

export const getAddressBalances = defineEndpoint({
  summary: 'Live balances of an address: the native currency and every token it was seen transferring.',
  description:
    'Read from the chain (one batched JSON-RPC round trip, cached about one block): the native balance first, then each ' +
    'ERC-20 and ERC-721 the address sent or received in indexed transfers (user operations, and plain transactions under ' +
    'INDEXER_TRANSFERS=known), then one item per ERC-1155 id it holds, with `token_id` and the amount its indexed ' +
    "transfers add up to (ERC-1155 cannot list an owner's ids). " +
    'Answers a top-level array of Balance, as the spec defines it (some clients expect `{tokenBalances}`: ' +
    'the spec wins). Quotes are null without a price source. A failed chain read is a 502.',
  tag: 'Account',
  input: z.object({ address: addressInput, network: defaultedNetworkInput, ...pageInput }),
  output: z.array(balanceSchema),
  cache: 'live',
  async handler(ctx, input) {
    const network = servedNetwork(ctx, input.network);
    const all = await tokens.listSeenBy(ctx.db, network.chainId, input.address);
    const seen = all.filter((t) => t.standard !== 'ERC1155');
    const multi = new Map(all.filter((t) => t.standard === 'ERC1155').map((t) => [t.address, t]));
    const held = multi.size === 0 ? [] : await tokens.listErc1155Holdings(ctx.db, network.chainId, input.address);
    const unnamed = all.filter((t) => t.symbol === null || (t.standard === 'ERC20' && t.decimals === null)).map((t) => t.address);
    const read = await ctx.services.chain.readBalances(network, input.address, {
      tokens: seen.map((t) => t.address),
      describe: unnamed,
    });
    const native = nativeCurrency(network.name);
    const items = [
      {
        balance: read.native.toString(),
        contract_address: NATIVE_ADDRESS,
        contract_name: native.name,
        contract_ticker_symbol: native.symbol,
        contract_decimals: native.decimals,
        native_token: 'true',
      },
      ...seen.flatMap((token) => {
        const balance = read.tokens.get(token.address);
        if (balance === null || balance === undefined) return [];
        const live = read.metadata.get(token.address);
        return [
          {
            balance: balance.toString(),
            contract_address: token.address,
            contract_name: token.name ?? live?.name ?? '',
            contract_ticker_symbol: token.symbol ?? live?.symbol ?? '',
            contract_decimals: token.decimals ?? live?.decimals ?? 0,
            native_token: 'false',
          },
        ];
      }),
      ...held.flatMap(({ token, tokenId, amount }) => {
        const t = multi.get(token);
        const live = read.metadata.get(token);
        return [
          {
            balance: amount,
            contract_address: token,
            contract_name: t?.name ?? live?.name ?? '',
            contract_ticker_symbol: t?.symbol ?? live?.symbol ?? '',
            contract_decimals: 0,
            native_token: 'false',
            token_id: tokenId,
          },
        ];
      }),
    ];
    return Promise.all(items.slice(input.skip, input.skip + input.first).map((item) => priced(ctx, item)));
  },
});
