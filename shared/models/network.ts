import { z } from 'zod';

/** getNetworks: chain id (string key) → network name. */
export const networkMapSchema = z.record(z.string().regex(/^\d+$/), z.string());
export type NetworkMap = z.infer<typeof networkMapSchema>;

/** getNetworkStatus: where the indexer stands on one network. */
export const networkStatusSchema = z
  .object({
    network: z.string(),
    chainId: z.number().int(),
    headBlock: z.number().int(),
    indexedBlock: z.number().int(),
    lagBlocks: z.number().int(),
    backfillComplete: z.boolean(),
  })
  .meta({ id: 'NetworkStatus' });
export type NetworkStatus = z.infer<typeof networkStatusSchema>;
