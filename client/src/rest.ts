import type { Endpoints } from './api.js';
import { requestJson, type CallOptions, type OpscanClientOptions } from './request.js';

/**
 * A method per `/v0` endpoint, typed by the server's own zod schemas (spelled out in api.ts: nothing
 * of the server, at run time or in the types, is in the client). Inputs are the endpoint's
 * parameters as the schema accepts them; answers are the endpoint's JSON.
 */
export type EndpointName = keyof Endpoints;
export type InputOf<K extends EndpointName> = Endpoints[K]['input'];
export type OutputOf<K extends EndpointName> = Endpoints[K]['output'];
/** An input with its `network` narrowed to the deployment's names (`Network`, by default any string). */
export type WithNetwork<TInput, Network extends string> = {
  [P in keyof TInput]: P extends 'network' ? Network | Exclude<TInput[P], string> : TInput[P];
};
export type RestClient<Network extends string = string> = {
  [K in EndpointName]: (input: WithNetwork<InputOf<K>, Network>, options?: CallOptions) => Promise<OutputOf<K>>;
};

/** Endpoints not read with GET: those that change something. Checked against the server's own list by the client's test. */
export const ENDPOINT_METHODS: Partial<Record<EndpointName, 'POST' | 'DELETE'>> = {
  createWebhook: 'POST',
  deleteWebhook: 'DELETE',
  replayWebhookDelivery: 'POST',
  testWebhook: 'POST',
};

function queryString(input: object): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(input)) if (value !== undefined && value !== null) params.set(key, String(value));
  const text = params.toString();
  return text ? `?${text}` : '';
}

export function createRestClient<Network extends string = string>(options: OpscanClientOptions): RestClient<Network> {
  const call = (name: string, input: object = {}, callOptions?: CallOptions) => {
    const method = ENDPOINT_METHODS[name as EndpointName] ?? 'GET';
    if (method === 'POST') return requestJson(options, `/v0/${name}`, { method, body: JSON.stringify(input) }, callOptions);
    return requestJson(options, `/v0/${name}${queryString(input)}`, { method }, callOptions);
  };
  // Any endpoint name is a method; the type above lists exactly the server's.
  return new Proxy({} as RestClient<Network>, {
    get: (_target, name) =>
      typeof name === 'string' ? (input?: object, callOptions?: CallOptions) => call(name, input, callOptions) : undefined,
  });
}
