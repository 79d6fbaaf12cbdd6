/**
 * Lists every API key, by prefix (keys are stored hashed).
 */
import { z } from 'zod';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import { keyOutput, presentKeys } from './answers.js';
import { defineOperation } from './operation.js';

export const listKeys = defineOperation({
  summary: 'List every key (prefixes only: keys are stored hashed)',
  tag: 'keys',
  method: 'GET',
  path: '/keys',
  input: z.object({}),
  output: z.object({ keys: z.array(keyOutput) }),
  async run(db) {
    return { keys: await presentKeys(db, await apiKeys.list(db)) };
  },
});
