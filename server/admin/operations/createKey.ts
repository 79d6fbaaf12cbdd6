/**
 * Issues a new API key: stores its hash and prefix with the given name and settings, and answers
 * the key itself, the one time it is shown.
 */
import { z } from 'zod';
import { generateApiKey } from '../../../shared/apiKeys.js';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import { issuedKeyOutput, presentKey } from './answers.js';
import { keyNameInput, keySettings } from './inputs.js';
import { storedSettings } from './lookups.js';
import { defineOperation } from './operation.js';

export const createKey = defineOperation({
  summary: 'Issue a new API key (the key is in this answer only)',
  tag: 'keys',
  method: 'POST',
  path: '/keys',
  status: 201,
  input: z.object({ name: keyNameInput, ...keySettings }),
  output: issuedKeyOutput,
  async run(db, { name, ...settings }) {
    const { key, prefix, hash } = generateApiKey();
    const stored = await apiKeys.insert(db, { prefix, hash, name, ...(await storedSettings(db, settings)) });
    return { apiKey: await presentKey(db, stored), key };
  },
});
