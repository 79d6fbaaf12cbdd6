import { z } from 'zod';
import { networkMapSchema } from '../../shared/models/index.js';
import { defineEndpoint } from './defineEndpoint.js';

export const getNetworks = defineEndpoint({
  summary: 'The networks this server indexes: chain id (string key) to network name.',
  description:
    "The spec's shape (its network map) listing what this deployment serves (NETWORKS), so that every name it answers " +
    'is one the `network` parameter accepts. Client spellings of those names (`baseSepolia`, `Base`) are accepted too.',
  tag: 'Supported Networks',
  input: z.object({}),
  output: networkMapSchema,
  handler(ctx) {
    return Promise.resolve(Object.fromEntries(ctx.config.networks.map((n) => [String(n.chainId), n.name])));
  },
});
