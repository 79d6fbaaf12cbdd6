/**
 * Answers one API key, named by its id or its prefix.
 */
import { z } from 'zod';
import { keyOutput, presentKey } from './answers.js';
import { keyRefInput } from './inputs.js';
import { findKey } from './lookups.js';
import { defineOperation } from './operation.js';

export const getKey = defineOperation({
  summary: 'One key',
  tag: 'keys',
  method: 'GET',
  path: '/keys/{key}',
  input: z.object({ key: keyRefInput }),
  output: keyOutput,
  async run(db, { key }) {
    return presentKey(db, await findKey(db, key));
  },
});
