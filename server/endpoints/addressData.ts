import type { NetworkConfig } from '../../shared/config.js';
import type { Page } from '../../shared/db/page.js';
import * as addressTransactions from '../../shared/db/tables/addressTransactions.js';
import * as tokenTransfers from '../../shared/db/tables/tokenTransfers.js';
import type { Transaction } from '../../shared/models/index.js';
import type { Ctx } from '../context.js';
import { labelOf } from '../labels.js';
import { nativeCurrency, prettyUsd } from '../prices.js';

/**
 * Address-level lists shared by the address endpoints and getAddressAggregateData: the rows of one
 * network, with labels and price quotes filled in, and the merge of several networks' pages.
 */

const WEI_PER_ETHER = 1e18;

/** Bundle transactions of an address, with known-contract labels and, when priced, quotes. */
export async function listTransactions(ctx: Ctx, network: NetworkConfig, address: string, page: Page): Promise<Transaction[]> {
  const [transactions, price] = await Promise.all([
    addressTransactions.listByAddress(ctx.db, network.chainId, address, page),
    ctx.services.prices.usd(nativeCurrency(network.name).symbol),
  ]);
  return transactions.map((tx) => {
    const gasQuote = price === null ? null : (Number(tx.fees_paid) / WEI_PER_ETHER) * price;
    const valueQuote = price === null ? null : (Number(tx.value) / WEI_PER_ETHER) * price;
    return {
      ...tx,
      from_address_label: labelOf(network, tx.from_address),
      to_address_label: labelOf(network, tx.to_address),
      value_quote: valueQuote,
      pretty_value_quote: valueQuote === null ? null : prettyUsd(valueQuote),
      gas_quote: gasQuote,
      pretty_gas_quote: gasQuote === null ? null : prettyUsd(gasQuote),
      gas_quote_rate: price,
    };
  });
}

export const listErc20Transfers = (ctx: Ctx, network: NetworkConfig, address: string, page: Page) =>
  tokenTransfers.listErc20ByAddress(ctx.db, network.chainId, address, page);

export const listNftTransfers = (ctx: Ctx, network: NetworkConfig, address: string, page: Page) =>
  tokenTransfers.listNftByAddress(ctx.db, network.chainId, address, page);

/**
 * One page of a newest-first list over several networks: each network's first skip+first rows,
 * merged by time (then network order), then the page cut out.
 */
export async function acrossNetworks<T>(
  networks: readonly NetworkConfig[],
  page: Page,
  list: (network: NetworkConfig, page: Page) => Promise<T[]>,
  timeOf: (item: T) => number,
): Promise<T[]> {
  if (networks.length === 1) return list(networks[0]!, page);
  const pages = await Promise.all(networks.map((n) => list(n, { first: page.first + page.skip, skip: 0 })));
  const merged = pages.flatMap((items, rank) => items.map((item) => ({ item, rank, time: timeOf(item) })));
  merged.sort((a, b) => b.time - a.time || a.rank - b.rank);
  return merged.slice(page.skip, page.skip + page.first).map((m) => m.item);
}
