import { z } from 'zod';
import { networkMapSchema } from '../../shared/models/index.js';
import { specNetworkMap } from '../../shared/networks.js';
import { defineEndpoint } from './defineEndpoint.js';

const NETWORK_MAP = specNetworkMap();

export const getNetworks = defineEndpoint({
  summary: 'The network map: chain id (string key) to network name.',
  tag: 'Supported Networks',
  input: z.object({}),
  output: networkMapSchema,
  handler() {
    return Promise.resolve(NETWORK_MAP);
  },
});
