/**
 * Revokes an API key at once and announces it, so every web process refuses it within seconds.
 */
import { z } from 'zod';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import { keyOutput, presentKey } from './answers.js';
import { keyRefInput } from './inputs.js';
import { findKey } from './lookups.js';
import { defineOperation } from './operation.js';

export const revokeKey = defineOperation({
  summary: 'Revoke a key at once (on every web process within seconds)',
  tag: 'keys',
  method: 'POST',
  path: '/keys/{key}/revoke',
  input: z.object({ key: keyRefInput }),
  output: keyOutput,
  async run(db, { key: ref }) {
    const key = await findKey(db, ref);
    const revoked = (await apiKeys.revokeById(db, key.id))!;
    await apiKeys.announceChange(db, key.id);
    return presentKey(db, revoked);
  },
});
