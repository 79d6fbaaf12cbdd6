import type { ApiKey } from '../../shared/db/tables/apiKeys.js';
import { AppError } from '../../shared/errors.js';
import type { Deps, RequestHeaders } from '../context.js';

/** The key a request carries: the `x-api-key` header, or HTTP Basic credentials (password = key). */
export function apiKeyOf(headers: RequestHeaders): string | undefined {
  if (headers.apiKey) return headers.apiKey.trim();
  const basic = /^Basic\s+(.+)$/i.exec(headers.authorization ?? '');
  if (!basic) return undefined;
  const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return (colon >= 0 ? decoded.slice(colon + 1) : decoded).trim() || undefined;
}

/** 401 without a key, 403 for an unknown or revoked one (the spec's "Invalid API Key"). */
export async function authenticate(deps: Pick<Deps, 'db' | 'services'>, headers: RequestHeaders): Promise<ApiKey> {
  const key = apiKeyOf(headers);
  if (!key) {
    throw new AppError('UNAUTHORIZED', 'Missing API key: send it in the x-api-key header.', { param: 'x-api-key' });
  }
  const found = key.length <= 200 ? await deps.services.apiKeys.find(deps.db, key) : null;
  if (!found || found.revokedAt) {
    throw new AppError('FORBIDDEN', 'Invalid API Key', { param: 'x-api-key' });
  }
  return found;
}
