/**
 * Changes an API key's name, plan, scopes, networks, expiry or own rate (absent fields are kept,
 * null clears) and announces the change, so web processes drop what they remember of the key.
 */
import { z } from 'zod';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import { keyOutput, presentKey } from './answers.js';
import { keyNameInput, keyRefInput, keySettings } from './inputs.js';
import { findKey, requireChanges, storedSettings } from './lookups.js';
import { defineOperation } from './operation.js';

export const updateKey = defineOperation({
  summary: "Change a key's name, plan, scopes, networks, expiry or own rate (absent fields are kept; null clears)",
  tag: 'keys',
  method: 'PATCH',
  path: '/keys/{key}',
  input: z.object({ key: keyRefInput, name: keyNameInput.optional(), ...keySettings }),
  output: keyOutput,
  async run(db, input) {
    requireChanges(input, ['key']);
    const { key: ref, name, ...settings } = input;
    const key = await findKey(db, ref);
    const updated = (await apiKeys.update(db, key.id, { name, ...(await storedSettings(db, settings)) }))!;
    await apiKeys.announceChange(db, key.id);
    return presentKey(db, updated);
  },
});
