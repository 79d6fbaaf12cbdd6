/**
 * Issues a replacement for an active API key with the old one's settings and quota holder; the old
 * key keeps working for a grace period and names the new one in replacedBy, both written in one
 * transaction.
 */
import { z } from 'zod';
import { generateApiKey } from '../../../shared/apiKeys.js';
import { withTransaction } from '../../../shared/db/client.js';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import { AppError } from '../../../shared/errors.js';
import { integer } from '../../endpoints/inputs.js';
import { issuedKeyOutput, keyOutput, presentKey } from './answers.js';
import { DEFAULT_GRACE_HOURS, keyRefInput, MAX_GRACE_HOURS } from './inputs.js';
import { findKey } from './lookups.js';
import { defineOperation } from './operation.js';

export const rotateKey = defineOperation({
  summary: 'Issue a replacement key; the old one keeps working for a grace period',
  description:
    "The new key has the old one's name, plan, scopes, networks and rate. The old key expires after `graceHours` " +
    '(sooner if it was due to expire sooner) and names the new one in `replacedBy`.',
  tag: 'keys',
  method: 'POST',
  path: '/keys/{key}/rotate',
  status: 201,
  input: z.object({
    key: keyRefInput,
    graceHours: integer(0, MAX_GRACE_HOURS, `an integer from 0 to ${MAX_GRACE_HOURS}`)
      .default(DEFAULT_GRACE_HOURS)
      .describe(`Hours the old key keeps working (0–${MAX_GRACE_HOURS}, default ${DEFAULT_GRACE_HOURS}).`),
  }),
  output: issuedKeyOutput.extend({ replaced: keyOutput }),
  async run(db, { key: ref, graceHours }) {
    const old = await findKey(db, ref);
    if (!apiKeys.isActive(old))
      throw new AppError('CONFLICT', `Key ${old.prefix} is revoked or expired: issue a new one instead`, { param: 'key' });
    const { key, prefix, hash } = generateApiKey();
    const graceEnd = new Date(Date.now() + graceHours * 3_600_000);
    const [issued, replaced] = await withTransaction(db, async (tx) => {
      const issued = await apiKeys.insert(tx, {
        prefix,
        hash,
        name: old.name,
        rateLimitPerSecond: old.rateLimitPerSecond,
        planId: old.planId,
        scopes: old.scopes,
        networks: old.networks,
        // The same customer: the new key counts against the quotas the old one has been using.
        quotaHolderId: old.quotaHolderId,
      });
      const expiresAt = old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd;
      const replaced = (await apiKeys.update(tx, old.id, { expiresAt, replacedBy: issued.id }))!;
      await apiKeys.announceChange(tx, old.id);
      return [issued, replaced];
    });
    return { apiKey: await presentKey(db, issued), key, replaced: await presentKey(db, replaced) };
  },
});
