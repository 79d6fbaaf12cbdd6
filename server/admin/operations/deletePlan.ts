/**
 * Deletes a plan no usable key is on (a conflict otherwise); revoked and expired keys are taken off
 * it first, in the same transaction.
 */
import { z } from 'zod';
import { withTransaction } from '../../../shared/db/client.js';
import * as apiKeys from '../../../shared/db/tables/apiKeys.js';
import * as apiPlans from '../../../shared/db/tables/apiPlans.js';
import { AppError } from '../../../shared/errors.js';
import { planOutput, presentPlan } from './answers.js';
import { planRefInput } from './inputs.js';
import { findPlan } from './lookups.js';
import { defineOperation } from './operation.js';

export const deletePlan = defineOperation({
  summary: 'Delete a plan no usable key is on (409 otherwise: move those keys to another plan first)',
  description: 'Revoked and expired keys do not count: they are taken off the plan, which they no longer use.',
  tag: 'plans',
  method: 'DELETE',
  path: '/plans/{plan}',
  input: z.object({ plan: planRefInput }),
  output: z.object({ deleted: planOutput }),
  async run(db, { plan: ref }) {
    const plan = await findPlan(db, ref);
    await withTransaction(db, async (tx) => {
      const inUse = await apiKeys.countActiveOnPlan(tx, plan.id);
      if (inUse > 0) {
        throw new AppError('CONFLICT', `Plan "${plan.name}" is used by ${inUse} key(s): move them to another plan first`, {
          param: 'plan',
          meta: { keys: inUse },
        });
      }
      await apiKeys.detachInactiveFromPlan(tx, plan.id);
      await apiPlans.deleteById(tx, plan.id);
      await apiKeys.announceChange(tx, null);
    });
    return { deleted: presentPlan(plan) };
  },
});
