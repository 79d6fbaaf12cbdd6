import { z } from 'zod';

/** getNetworks: chain id (string key) → network name. */
export const networkMapSchema = z.record(z.string().regex(/^\d+$/), z.string());
export type NetworkMap = z.infer<typeof networkMapSchema>;

/** The batch the indexer fails to write (each attempt again at the same block), while it fails. */
export const writeFailureSchema = z
  .object({
    fromBlock: z.number().int(),
    toBlock: z.number().int(),
    reason: z.string().meta({ description: "The last attempt's error." }),
    attempts: z.number().int().meta({ description: 'Attempts that failed at fromBlock in a row.' }),
    since: z.string().meta({ description: 'ISO time of the first of them.' }),
  })
  .meta({ id: 'WriteFailure' });

/** getNetworkStatus: where the indexer stands on one network. */
export const networkStatusSchema = z
  .object({
    network: z.string(),
    chainId: z.number().int(),
    headBlock: z.number().int(),
    indexedBlock: z.number().int(),
    lagBlocks: z.number().int(),
    backfillComplete: z.boolean(),
    /** null while batches commit; else the block the network is held at, and why. */
    writeFailure: writeFailureSchema.nullable(),
  })
  .meta({ id: 'NetworkStatus' });
export type NetworkStatus = z.infer<typeof networkStatusSchema>;
