import { getAddress } from 'ethers';
import { z } from 'zod';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import { AppError } from '../../shared/errors.js';
import { webhookSchema, WEBHOOK_FILTERS, type WebhookFilter } from '../../shared/models/webhook.js';
import { newWebhookId } from '../../shared/webhookIds.js';
import { keyringFor } from '../../shared/webhookKeyring.js';
import { encryptSecret, generateSigningSecret } from '../../shared/webhookSecrets.js';
import { checkWebhookUrl, MAX_WEBHOOK_URL_LENGTH } from '../../shared/webhookUrls.js';
import { planOf } from '../access.js';
import { defineEndpoint } from './defineEndpoint.js';
import { ZERO_ADDRESS } from '../../shared/chain/constants.js';

/** Any case is accepted; mixed case must be a valid EIP-55 checksum (a typo is then caught). */
const identifierSchema = z
  .string()
  .trim()
  .regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address')
  .refine((a) => a.slice(2) === a.slice(2).toLowerCase() || a.slice(2) === a.slice(2).toUpperCase() || isChecksummed(a), {
    message: 'has an invalid EIP-55 checksum (send it all lower case to skip the check)',
  });

function isChecksummed(address: string): boolean {
  try {
    return getAddress(address) === address;
  } catch {
    return false;
  }
}

const input = z.object({
  webhookUrl: z.string().trim().min(1, 'is required').max(MAX_WEBHOOK_URL_LENGTH),
  // Typed as the four names; any case (and surrounding spaces) is accepted, as the API always did.
  filter: z
    .string()
    .transform((f) => f.trim().toUpperCase())
    .pipe(z.enum(WEBHOOK_FILTERS, { error: `must be one of ${WEBHOOK_FILTERS.join(', ')}` })) as z.ZodType<WebhookFilter, WebhookFilter>,
  identifier: identifierSchema,
  chainId: z
    .union([
      z
        .string()
        .trim()
        .regex(/^\d{1,15}$/, 'must be a chain id (an integer)'),
      z.number().int().min(0),
    ])
    .transform(Number),
  apiName: z.string().trim().min(1, 'is required').max(100),
});

export const createWebhook = defineEndpoint({
  summary: 'Creates a webhook: activity matching filter = identifier on chainId is POSTed, signed, to webhookUrl.',
  tag: 'Webhook',
  capability: 'webhooks',
  // A caller reads back the webhooks and deliveries it just wrote: never from a replica behind.
  reads: 'primary',
  methods: ['GET', 'POST'],
  kind: 'mutation',
  input,
  output: z.object({
    // The signing secret is answered here only, once.
    webhook: webhookSchema.extend({ secret: z.string() }),
    success: z.literal(true),
  }),
  async handler(ctx, { webhookUrl, filter, identifier, chainId, apiName }) {
    const apiKeyId = ctx.apiKey.id;
    const network = ctx.config.networks.find((n) => n.chainId === chainId);
    if (!network) {
      const indexed = ctx.config.networks.map((n) => n.chainId).join(', ');
      throw new AppError('BAD_REQUEST', `Invalid parameter "chainId": ${chainId} is not an indexed network (indexed: ${indexed})`, {
        param: 'chainId',
      });
    }
    const address = identifier.toLowerCase();
    // Nothing is ever sent, deployed, bundled or paid by the zero address: such a webhook would stay silent.
    if (address === ZERO_ADDRESS) {
      throw new AppError('BAD_REQUEST', 'Invalid parameter "identifier": the zero address never matches anything', {
        param: 'identifier',
      });
    }
    const verdict = await checkWebhookUrl(webhookUrl, { allowPrivate: ctx.config.WEBHOOK_ALLOW_PRIVATE_URLS });
    if (!verdict.ok) {
      throw new AppError('BAD_REQUEST', `Invalid parameter "webhookUrl": ${verdict.reason}`, { param: 'webhookUrl' });
    }

    const plan = await planOf(ctx, ctx.apiKey);
    const keyring = await keyringFor(ctx.db, ctx.config.WEBHOOK_SECRET_KEY);
    const id = newWebhookId();
    const secret = generateSigningSecret();
    const created = await ctx.db.transaction(async (tx) => {
      await webhooks.lockKey(tx, apiKeyId);
      const identity = { apiKeyId, url: webhookUrl, filter, address, chainId };
      const existing = await webhooks.findIdentical(tx, identity);
      if (existing) {
        throw new AppError('CONFLICT', `An identical webhook exists already: ${existing}`, {
          param: 'webhookUrl',
          meta: { webhookId: existing },
        });
      }
      const owned = await webhooks.countByKey(tx, apiKeyId);
      // The key's plan caps what it may own (a product limit: 403), below the deployment's cap.
      if (plan?.webhooksAllowed != null && owned >= plan.webhooksAllowed) {
        throw new AppError(
          'FORBIDDEN',
          `This API key's plan "${plan.name}" allows ${plan.webhooksAllowed} webhooks (webhooksAllowed) and the key has ${owned}: delete one first or move to another plan`,
          { meta: { planLimit: 'webhooksAllowed', limit: plan.webhooksAllowed } },
        );
      }
      const limit = ctx.config.WEBHOOK_MAX_PER_KEY;
      if (owned >= limit) {
        throw new AppError('BAD_REQUEST', `This API key has ${limit} webhooks, the most allowed: delete one first`, {
          meta: { limit },
        });
      }
      return webhooks.insert(tx, {
        ...identity,
        id,
        apiName,
        identifier,
        secretCiphertext: encryptSecret(keyring, id, secret),
      });
    });
    const { status: _status, disabledReason: _reason, ...webhook } = webhooks.toWebhookModel(created);
    return { webhook: { ...webhook, secret }, success: true as const };
  },
});
