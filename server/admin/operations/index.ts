/**
 * Every admin operation (one file each, defined as operation.ts says), in the order the OpenAPI
 * document lists them, with what their callers use besides: `perform`, the operation type, and the
 * limits the commands print. Every change to a key or a plan is announced on API_KEYS_CHANNEL
 * (apiKeys.announceChange), so web processes drop what they remember of the key within moments.
 */
import { createKey } from './createKey.js';
import { createPlan } from './createPlan.js';
import { deletePlan } from './deletePlan.js';
import { getKey } from './getKey.js';
import { getUsage } from './getUsage.js';
import { importKey } from './importKey.js';
import { listKeys } from './listKeys.js';
import { listPlans } from './listPlans.js';
import { revokeKey } from './revokeKey.js';
import { rotateKey } from './rotateKey.js';
import { updateKey } from './updateKey.js';
import { updatePlan } from './updatePlan.js';

export { perform, type AdminOperation } from './operation.js';
export { DEFAULT_GRACE_HOURS, MAX_GRACE_HOURS, MAX_HOURLY_USAGE_DAYS, MAX_USAGE_DAYS } from './inputs.js';
export { USAGE_GROUPINGS } from './getUsage.js';
export { createKey, createPlan, deletePlan, getKey, getUsage, importKey, listKeys, listPlans, revokeKey, rotateKey, updateKey, updatePlan };

/** Every operation, in the order the OpenAPI document lists them. */
export const adminOperations = {
  listKeys,
  createKey,
  importKey,
  getKey,
  updateKey,
  rotateKey,
  revokeKey,
  listPlans,
  createPlan,
  updatePlan,
  deletePlan,
  getUsage,
} as const;
