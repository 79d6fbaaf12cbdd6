/**
 * Creates a plan (rate, burst, quotas, webhooks allowed, networks); a name in use is a conflict.
 */
import { z } from 'zod';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import * as apiPlans from '../../../shared/db/tables/apiPlans.js';
import { AppError } from '../../../shared/errors.js';
import { planOutput, presentPlan } from './answers.js';
import { planFields, planNameInput } from './inputs.js';
import { isUniqueViolation } from './lookups.js';
import { defineOperation } from './operation.js';

export const createPlan = defineOperation({
  summary: 'Create a plan',
  tag: 'plans',
  method: 'POST',
  path: '/plans',
  status: 201,
  input: z.object({
    name: planNameInput,
    rateLimitPerSecond: planFields.rateLimitPerSecond,
    burst: planFields.burst.optional(),
    requestsPerDay: planFields.requestsPerDay.default(null),
    requestsPerMonth: planFields.requestsPerMonth.default(null),
    webhooksAllowed: planFields.webhooksAllowed.default(null),
    networks: planFields.networks.default(null),
  }),
  output: planOutput,
  async run(db, { burst, ...plan }) {
    if (await apiPlans.findByName(db, plan.name))
      throw new AppError('CONFLICT', `A plan named "${plan.name}" exists already`, { param: 'name' });
    try {
      const created = await apiPlans.insert(db, { ...plan, burst: burst ?? plan.rateLimitPerSecond * 3 });
      await apiKeys.announceChange(db, null);
      return presentPlan(created);
    } catch (e) {
      if (isUniqueViolation(e)) throw new AppError('CONFLICT', `A plan named "${plan.name}" exists already`, { param: 'name' });
      throw e;
    }
  },
});
