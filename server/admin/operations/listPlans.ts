/**
 * Lists the plans, each with how many keys are on it.
 */
import { z } from 'zod';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import * as apiPlans from '../../../shared/db/tables/apiPlans.js';
import { planOutput, presentPlan } from './answers.js';
import { defineOperation } from './operation.js';

const planWithKeysOutput = planOutput.extend({ keys: z.number().int().describe('Keys on the plan (revoked ones included).') });

export const listPlans = defineOperation({
  summary: 'List the plans, with how many keys each has',
  tag: 'plans',
  method: 'GET',
  path: '/plans',
  input: z.object({}),
  output: z.object({ plans: z.array(planWithKeysOutput) }),
  async run(db) {
    const plans = await apiPlans.list(db);
    const counts = await apiKeys.countsByPlan(db);
    return { plans: plans.map((p) => ({ ...presentPlan(p), keys: counts.get(p.id) ?? 0 })) };
  },
});
