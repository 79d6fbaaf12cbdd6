/**
 * Answers the requests counted per key per day or hour, per endpoint, or per key (the busiest
 * keys), over a range bounded in days.
 */
import { z } from 'zod';
import * as apiKeyUsage from '../../../shared/db/tables/apiKeyUsage.js';
import { AppError } from '../../../shared/errors.js';
import { integer } from '../../endpoints/inputs.js';
import { dateOutput } from './answers.js';
import { dateInput, keyRefInput, MAX_HOURLY_USAGE_DAYS, MAX_USAGE_DAYS } from './inputs.js';
import { findKey } from './lookups.js';
import { defineOperation } from './operation.js';

export const USAGE_GROUPINGS = ['day', 'hour', 'endpoint', 'key'] as const;

const sumsOutput = {
  requests: z.number().int(),
  clientErrors: z.number().int().describe('Requests answered 4xx.'),
  serverErrors: z.number().int().describe('Requests answered 5xx.'),
};

const usageRowOutput = z
  .object({
    period: dateOutput.optional().describe('groupBy day or hour: the UTC day or hour the row counts.'),
    key: z.object({ id: z.string(), prefix: z.string(), name: z.string() }).optional().describe('groupBy day, hour or key.'),
    endpoint: z.string().optional().describe('groupBy endpoint.'),
    ...sumsOutput,
  })
  .meta({ id: 'UsageRow' });

export const getUsage = defineOperation({
  summary: 'Requests counted per key per day or hour, per endpoint, or per key (top keys)',
  description:
    'The range is [from, to) in UTC: by default the last `days` days (7) up to now. groupBy=day|hour: one row per key and ' +
    'period for the `limit` busiest keys of the range (or the one `key`); endpoint: per endpoint, busiest first; key: the ' +
    `busiest keys. Ranges up to ${MAX_USAGE_DAYS} days (${MAX_HOURLY_USAGE_DAYS} by hour). Counts reach the database in ` +
    "batches: the last few seconds' requests may not be in yet.",
  tag: 'usage',
  method: 'GET',
  path: '/usage',
  input: z.object({
    key: keyRefInput.optional().describe('Only this key (id or prefix).'),
    groupBy: z
      .enum(USAGE_GROUPINGS, { error: `must be one of ${USAGE_GROUPINGS.join(', ')}` })
      .default('day')
      .describe('day (default), hour, endpoint or key.'),
    from: dateInput.optional().describe('Start (ISO 8601 date or date-time, inclusive). Default: `days` days before `to`.'),
    to: dateInput.optional().describe('End (exclusive). Default: now.'),
    days: integer(1, MAX_USAGE_DAYS, `an integer from 1 to ${MAX_USAGE_DAYS}`)
      .default(7)
      .describe('Days before `to` when `from` is absent (default 7).'),
    limit: integer(1, 100, 'an integer from 1 to 100').default(10).describe('Most keys (or endpoints) answered (1–100, default 10).'),
  }),
  output: z.object({
    from: dateOutput,
    to: dateOutput,
    groupBy: z.enum(USAGE_GROUPINGS),
    rows: z.array(usageRowOutput),
  }),
  async run(db, input) {
    const to = input.to ?? new Date();
    const from = input.from ?? new Date(to.getTime() - input.days * 86_400_000);
    const days = (to.getTime() - from.getTime()) / 86_400_000;
    if (days <= 0) throw new AppError('BAD_REQUEST', 'Invalid parameter "from": must be before "to"', { param: 'from' });
    const maxDays = input.groupBy === 'hour' ? MAX_HOURLY_USAGE_DAYS : MAX_USAGE_DAYS;
    if (days > maxDays) {
      throw new AppError(
        'BAD_REQUEST',
        `Invalid parameter "from": the range may span at most ${maxDays} days${input.groupBy === 'hour' ? ' by hour' : ''}`,
        {
          param: 'from',
        },
      );
    }
    const range = { from, to, apiKeyId: input.key ? (await findKey(db, input.key)).id : undefined };
    const keyOf = (r: apiKeyUsage.KeyUsage) => ({ id: r.apiKeyId, prefix: r.prefix, name: r.name });
    const sums = (r: apiKeyUsage.UsageSums) => ({ requests: r.requests, clientErrors: r.clientErrors, serverErrors: r.serverErrors });
    let rows: Array<z.input<typeof usageRowOutput>>;
    if (input.groupBy === 'endpoint') {
      rows = (await apiKeyUsage.perEndpoint(db, range, input.limit)).map((r) => ({ endpoint: r.endpoint, ...sums(r) }));
    } else if (input.groupBy === 'key') {
      rows = (await apiKeyUsage.topKeys(db, range, input.limit)).map((r) => ({ key: keyOf(r), ...sums(r) }));
    } else {
      rows = (await apiKeyUsage.perKeyPerPeriod(db, range, input.groupBy, input.limit)).map((r) => ({
        period: r.period.toISOString(),
        key: keyOf(r),
        ...sums(r),
      }));
    }
    return { from: from.toISOString(), to: to.toISOString(), groupBy: input.groupBy, rows };
  },
});
