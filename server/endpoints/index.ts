import type { z } from 'zod';
import type { Ctx } from '../context.js';
import { authenticate } from '../http/auth.js';
import { parseInput } from '../http/errors.js';
import type { Endpoint } from './defineEndpoint.js';
import { getNetworks } from './getNetworks.js';
import { createWebhook } from './createWebhook.js';
import { listWebhooks } from './listWebhooks.js';
import { deleteWebhook } from './deleteWebhook.js';
import { getWebhookDeliveries } from './getWebhookDeliveries.js';
import { replayWebhookDelivery } from './replayWebhookDelivery.js';
import { testWebhook } from './testWebhook.js';

/** The single registry: key = REST path `/v0/<key>` = tRPC procedure name. */
export const endpoints = {
  getNetworks,
  createWebhook,
  listWebhooks,
  deleteWebhook,
  getWebhookDeliveries,
  replayWebhookDelivery,
  testWebhook,
};

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;
export type OutputOf<K extends EndpointName> = z.input<Endpoints[K]['output']>;

/**
 * The one path both transports take: authenticate, validate, run. Transports differ only in how
 * they read the input and write the answer or the error.
 */
export async function callEndpoint<K extends EndpointName>(ctx: Ctx, name: K, rawInput: unknown): Promise<OutputOf<K>> {
  const endpoint = endpoints[name] as unknown as Endpoint;
  if (endpoint.auth !== 'none') ctx.apiKey = await authenticate(ctx, ctx.headers);
  const input = parseInput(endpoint.input, rawInput ?? {});
  return (await endpoint.handler(ctx, input)) as OutputOf<K>;
}
