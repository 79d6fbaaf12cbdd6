import { z } from 'zod';
import { nativeCurrency } from '../prices.js';
import { defineEndpoint } from './defineEndpoint.js';

/** The symbols the JiffyScan explorer looks prices up by. */
const EXPLORER_SYMBOLS = ['ETH', 'MATIC', 'FUSE', 'BNB', 'AVAX', 'FTM', 'VANRY', 'MON', 'OP'];

export const getPrices = defineEndpoint({
  summary: 'USD prices by symbol, from the configured price source.',
  description:
    'Every symbol the price source (PRICE_SOURCE_URL) answers, plus, always present, the symbols explorers look up ' +
    `(${EXPLORER_SYMBOLS.join(', ')}) and the native currency of every served network: null when the source has no ` +
    'price for it or no source is configured. Keyless (explorers call it on every page); the source is read at most ' +
    'once a minute.',
  tag: 'Metrics',
  auth: 'none',
  input: z.object({}),
  output: z.record(z.string(), z.number().nullable()),
  // Not chain data: 'live' only keeps it about a block, the price source itself is re-read each minute.
  cache: 'live',
  async handler(ctx) {
    const known = await ctx.services.prices.all();
    const symbols = new Set([...EXPLORER_SYMBOLS, ...ctx.config.networks.map((n) => nativeCurrency(n.name).symbol), ...Object.keys(known)]);
    return Object.fromEntries([...symbols].sort().map((symbol) => [symbol, known[symbol] ?? null]));
  },
});
