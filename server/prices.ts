import type { Logger } from '../shared/log.js';

/**
 * USD prices by symbol from the configured price source (PRICE_SOURCE_URL answering
 * `{"ETH": 3120.5, ...}`), fetched at most once a minute and shared by concurrent callers. Without
 * a source, or while it fails and nothing was fetched before, prices are null and so are every
 * quote field of the answers.
 */
export type PriceSource = {
  /** USD per unit of `symbol`, or null when unknown. */
  usd(symbol: string): Promise<number | null>;
  /** Every price the source answered, by upper-case symbol ({} without a source). */
  all(): Promise<Readonly<Record<string, number>>>;
};

const REFRESH_MS = 60_000;
const FETCH_TIMEOUT_MS = 2000;

export function createPriceSource(url: string | undefined, log: Logger): PriceSource {
  if (!url) return { usd: () => Promise.resolve(null), all: () => Promise.resolve({}) };
  let prices: Record<string, number> = {};
  let fetchedAt = -Infinity;
  let loading: Promise<void> | null = null;

  async function refresh(): Promise<void> {
    try {
      const res = await fetch(url!, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      if (!res.ok) throw new Error(`price source answered ${res.status}`);
      const body = await res.json();
      if (!body || typeof body !== 'object') throw new Error('price source answered no object');
      prices = Object.fromEntries(
        Object.entries(body)
          .filter((e): e is [string, number] => typeof e[1] === 'number' && Number.isFinite(e[1]))
          .map(([k, v]) => [k.toUpperCase(), v]),
      );
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'price source failed; keeping the last prices');
    }
    // A failing source is retried after the same interval, not on every request.
    fetchedAt = Date.now();
  }

  async function current(): Promise<Record<string, number>> {
    if (Date.now() - fetchedAt > REFRESH_MS) {
      loading ??= refresh().finally(() => {
        loading = null;
      });
      await loading;
    }
    return prices;
  }

  return {
    async usd(symbol) {
      return (await current())[symbol.toUpperCase()] ?? null;
    },
    all: current,
  };
}

/** Native currency of each network (symbol as price sources key it). Unlisted: ETH. */
const NATIVE_CURRENCY: Readonly<Record<string, { symbol: string; name: string }>> = {
  matic: { symbol: 'MATIC', name: 'Polygon' },
  mumbai: { symbol: 'MATIC', name: 'Polygon' },
  'polygon-amoy': { symbol: 'MATIC', name: 'Polygon' },
  bsc: { symbol: 'BNB', name: 'BNB' },
  'bnb-testnet': { symbol: 'BNB', name: 'BNB' },
  avalanche: { symbol: 'AVAX', name: 'Avalanche' },
  'avalanche-fuji': { symbol: 'AVAX', name: 'Avalanche' },
  fantom: { symbol: 'FTM', name: 'Fantom' },
  'fantom-testnet': { symbol: 'FTM', name: 'Fantom' },
  fuse: { symbol: 'FUSE', name: 'Fuse' },
  gnosis: { symbol: 'XDAI', name: 'xDAI' },
  'celo-alfajores': { symbol: 'CELO', name: 'Celo' },
  degen: { symbol: 'DEGEN', name: 'Degen' },
  'monad-testnet': { symbol: 'MON', name: 'Monad' },
  'open-campus-test': { symbol: 'EDU', name: 'EDU' },
};

export function nativeCurrency(network: string): { symbol: string; name: string; decimals: number } {
  return { ...(NATIVE_CURRENCY[network] ?? { symbol: 'ETH', name: 'Ether' }), decimals: 18 };
}

/** "$1,234.56" as Covalent's pretty_* fields. */
export function prettyUsd(amount: number): string {
  return amount.toLocaleString('en-US', { style: 'currency', currency: 'USD' });
}
