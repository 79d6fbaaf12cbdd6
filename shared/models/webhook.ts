import { z } from 'zod';

export const WEBHOOK_FILTERS = ['ADDRESS', 'FACTORY', 'BUNDLER', 'PAYMASTER'] as const;
export type WebhookFilter = (typeof WEBHOOK_FILTERS)[number];

export const webhookSchema = z
  .object({
    apiName: z.string(),
    webhookUrl: z.string(),
    filter: z.enum(WEBHOOK_FILTERS),
    chainId: z.string(),
    identifier: z.string(),
    id: z.string(),
    createdAt: z.iso.datetime(),
  })
  .meta({ id: 'Webhook' });
export type Webhook = z.infer<typeof webhookSchema>;
