import type { Cluster, Redis } from 'ioredis';
import type { Queryable } from '../shared/db/client.js';
import * as apiKeyUsage from '../shared/db/tables/apiKeyUsage.js';
import type { ApiPlan } from '../shared/db/tables/apiPlans.js';
import { AppError } from '../shared/errors.js';

/**
 * A plan's quotas: requests per UTC day and per UTC calendar month. A call admitted by the rate
 * limiter is counted against both; a call over either is refused (429) without being counted, so
 * hammering a spent daily quota does not eat the month's.
 *
 * With Redis the counts live there (one script per call: check both, add to both), so a quota holds
 * across every web process; while Redis is unreachable (or without it: the embedded default) each
 * process counts in memory. Either way a count is started from the key's usage already stored in
 * api_key_usage for the day and the month (its answered calls, i.e. 4xx answers aside: those may
 * be refusals), so a restart or a lost Redis does not give a key a fresh day.
 */
export type QuotaCounter = {
  /**
   * Counts one call against the quotas `keyId` holds (a key's quotaHolderId) on `plan`; throws
   * AppError TOO_MANY_REQUESTS naming the spent quota.
   */
  count(db: Queryable, keyId: string, plan: ApiPlan): Promise<void>;
};

export type QuotaName = 'requestsPerDay' | 'requestsPerMonth';

/** The UTC day and month a call falls in, with when each ends. */
export function quotaWindows(now = new Date()) {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const dayStart = Date.UTC(y, m, now.getUTCDate());
  const monthStart = Date.UTC(y, m, 1);
  return {
    day: { id: new Date(dayStart).toISOString().slice(0, 10), start: dayStart, end: dayStart + 86_400_000 },
    month: { id: new Date(monthStart).toISOString().slice(0, 7), start: monthStart, end: Date.UTC(y, m + 1, 1) },
  };
}

/** Adds one to both counts unless either is at its limit (-1: no limit); returns {admitted, day, month}. */
const COUNT_SCRIPT = `
local day = tonumber(redis.call('GET', KEYS[1]) or ARGV[3])
local month = tonumber(redis.call('GET', KEYS[2]) or ARGV[4])
local dayLimit = tonumber(ARGV[1])
local monthLimit = tonumber(ARGV[2])
if (dayLimit >= 0 and day >= dayLimit) or (monthLimit >= 0 and month >= monthLimit) then
  return {0, day, month}
end
redis.call('SET', KEYS[1], day + 1, 'PX', ARGV[5])
redis.call('SET', KEYS[2], month + 1, 'PX', ARGV[6])
return {1, day + 1, month + 1}`;

type Counts = { admitted: boolean; day: number; month: number };

/** Expiry margin beyond a window's end (processes' clocks and Redis's need not agree). */
const EXPIRY_MARGIN_MS = 86_400_000;

export function createQuotaCounter(options: { redis?: Redis | Cluster; keyPrefix: string }): QuotaCounter {
  const { redis } = options;
  redis?.defineCommand('opscanCountQuota', { numberOfKeys: 2, lua: COUNT_SCRIPT });
  /** Usage stored before this process counted: one query per key and day (memoised). */
  const seeds = new Map<string, Promise<{ day: number; month: number }>>();
  /** Counts in memory (no Redis, or Redis unreachable): per key and window id. */
  const inMemory = new Map<string, number>();
  let today = '';

  function seedOf(db: Queryable, keyId: string, windows: ReturnType<typeof quotaWindows>) {
    const id = `${keyId}:${windows.day.id}`;
    let seed = seeds.get(id);
    if (!seed) {
      seed = apiKeyUsage.answeredSince(db, keyId, new Date(windows.day.start), new Date(windows.month.start));
      seed.catch(() => seeds.delete(id));
      seeds.set(id, seed);
    }
    return seed;
  }

  function countInMemory(
    keyId: string,
    plan: ApiPlan,
    windows: ReturnType<typeof quotaWindows>,
    seed: { day: number; month: number },
  ): Counts {
    const dayKey = `${keyId}:${windows.day.id}`;
    const monthKey = `${keyId}:${windows.month.id}`;
    const day = inMemory.get(dayKey) ?? seed.day;
    const month = inMemory.get(monthKey) ?? seed.month;
    if (
      (plan.requestsPerDay !== null && day >= plan.requestsPerDay) ||
      (plan.requestsPerMonth !== null && month >= plan.requestsPerMonth)
    ) {
      return { admitted: false, day, month };
    }
    inMemory.set(dayKey, day + 1);
    inMemory.set(monthKey, month + 1);
    return { admitted: true, day: day + 1, month: month + 1 };
  }

  async function countIn(db: Queryable, keyId: string, plan: ApiPlan, windows: ReturnType<typeof quotaWindows>): Promise<Counts> {
    const seed = await seedOf(db, keyId, windows);
    if (!redis || redis.status !== 'ready') return countInMemory(keyId, plan, windows, seed);
    // `{key:id}` is a hash tag: both counts of a key stay on one Redis Cluster slot.
    const base = `${options.keyPrefix}quota:{key:${keyId}}:`;
    try {
      const [admitted, day, month] = (await (redis as unknown as CountCommand).opscanCountQuota(
        `${base}${windows.day.id}`,
        `${base}${windows.month.id}`,
        plan.requestsPerDay ?? -1,
        plan.requestsPerMonth ?? -1,
        seed.day,
        seed.month,
        windows.day.end - Date.now() + EXPIRY_MARGIN_MS,
        windows.month.end - Date.now() + EXPIRY_MARGIN_MS,
      )) as [number, number, number];
      return { admitted: admitted === 1, day, month };
    } catch {
      return countInMemory(keyId, plan, windows, seed);
    }
  }

  return {
    async count(db, keyId, plan) {
      if (plan.requestsPerDay === null && plan.requestsPerMonth === null) return;
      const now = new Date();
      const windows = quotaWindows(now);
      if (windows.day.id !== today) {
        // A new day: what was remembered for earlier ones is of no use.
        today = windows.day.id;
        seeds.clear();
        for (const key of inMemory.keys()) if (!key.endsWith(windows.day.id) && !key.endsWith(windows.month.id)) inMemory.delete(key);
      }
      const counts = await countIn(db, keyId, plan, windows);
      if (counts.admitted) return;
      const daySpent = plan.requestsPerDay !== null && counts.day >= plan.requestsPerDay;
      const quota: QuotaName = daySpent ? 'requestsPerDay' : 'requestsPerMonth';
      const window = daySpent ? windows.day : windows.month;
      const limit = (daySpent ? plan.requestsPerDay : plan.requestsPerMonth)!;
      const retryAfter = Math.max(1, Math.ceil((window.end - now.getTime()) / 1000));
      const resetsAt = new Date(window.end).toISOString();
      const per = daySpent ? 'UTC day' : 'UTC calendar month';
      throw new AppError(
        'TOO_MANY_REQUESTS',
        `Quota exceeded: plan "${plan.name}" allows ${limit} requests per ${per} (${quota}); it resets at ${resetsAt}, in ${retryAfter} s.`,
        {
          meta: {
            quota,
            limit,
            retryAfter,
            resetsAt,
            // The window's length, for the RateLimit-Policy header.
            windowSeconds: Math.round((window.end - window.start) / 1000),
          },
        },
      );
    },
  };
}

type CountCommand = { opscanCountQuota(...args: Array<string | number>): Promise<unknown> };
