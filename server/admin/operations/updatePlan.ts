/**
 * Changes a plan's name, rates, quotas or networks (absent fields are kept, null clears a cap) and
 * announces it: the plan's keys follow at once.
 */
import { z } from 'zod';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import * as apiPlans from '../../../shared/db/tables/apiPlans.js';
import { AppError } from '../../../shared/errors.js';
import { planOutput, presentPlan } from './answers.js';
import { planFields, planNameInput, planRefInput } from './inputs.js';
import { findPlan, requireChanges } from './lookups.js';
import { defineOperation } from './operation.js';

export const updatePlan = defineOperation({
  summary: "Change a plan's name, rates, quotas or networks (absent fields are kept; null clears a cap); its keys follow at once",
  tag: 'plans',
  method: 'PATCH',
  path: '/plans/{plan}',
  input: z.object({
    plan: planRefInput,
    name: planNameInput.optional(),
    ...Object.fromEntries(Object.entries(planFields).map(([k, v]) => [k, v.optional()])),
  }) as z.ZodObject<
    { plan: typeof planRefInput; name: z.ZodOptional<typeof planNameInput> } & {
      [K in keyof typeof planFields]: z.ZodOptional<(typeof planFields)[K]>;
    }
  >,
  output: planOutput,
  async run(db, input) {
    requireChanges(input, ['plan']);
    const { plan: ref, ...changes } = input;
    const plan = await findPlan(db, ref);
    if (changes.name && changes.name !== plan.name && (await apiPlans.findByName(db, changes.name))) {
      throw new AppError('CONFLICT', `A plan named "${changes.name}" exists already`, { param: 'name' });
    }
    const updated = (await apiPlans.update(db, plan.id, changes))!;
    await apiKeys.announceChange(db, null);
    return presentPlan(updated);
  },
});
