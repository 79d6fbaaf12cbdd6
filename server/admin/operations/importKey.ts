/**
 * Stores a key issued by a previous deployment (e.g. JiffyScan) so that clients sending it keep
 * working; a key already stored, or one whose prefix another key has, is a conflict.
 */
import { z } from 'zod';
import { importApiKey, IMPORTED_KEY_PATTERN } from '../../../shared/apiKeys.js';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import { AppError } from '../../../shared/errors.js';
import { keyOutput, presentKey } from './answers.js';
import { keyNameInput, keySettings } from './inputs.js';
import { storedSettings } from './lookups.js';
import { defineOperation } from './operation.js';

export const importKey = defineOperation({
  summary: 'Store a key issued by a previous deployment (e.g. JiffyScan) so that clients sending it keep working',
  tag: 'keys',
  method: 'POST',
  path: '/keys/import',
  status: 201,
  input: z.object({
    name: keyNameInput,
    key: z
      .string({ error: 'must be the key to import' })
      .regex(IMPORTED_KEY_PATTERN, 'must be 16 to 128 printable ASCII characters without spaces')
      .describe('The key as clients send it (16 to 128 printable ASCII characters).'),
    ...keySettings,
  }),
  output: keyOutput,
  async run(db, { name, key, ...settings }) {
    const parsed = importApiKey(key);
    const clash = await apiKeys.findClash(db, parsed);
    if (clash) {
      throw new AppError(
        'CONFLICT',
        `This key is already stored, or another key starts with ${parsed.prefix} ("${clash.name}"): nothing imported`,
        {
          param: 'key',
        },
      );
    }
    const stored = await apiKeys.insert(db, { ...parsed, name, ...(await storedSettings(db, settings)) });
    return presentKey(db, stored);
  },
});
