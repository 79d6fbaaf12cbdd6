import * as ops from '../../server/admin/operations/index.js';
import type { Db } from '../../shared/db/client.js';
import { parse, performCommand, UsageError } from './args.js';

export const USAGE_USAGE = `usage: opscan usage [--key KEY] [--days N] [--by day|hour|endpoint|key] [--limit N] [--json]
  Requests counted per key per day (default) or hour, per endpoint, or the busiest keys, over the
  last N days (default 7; up to ${ops.MAX_USAGE_DAYS}, ${ops.MAX_HOURLY_USAGE_DAYS} by hour). KEY: an id or prefix (see keys list).`;

export async function usageCommand(db: Db, args: string[]): Promise<void> {
  const { values, positionals } = parse(args, {
    key: { type: 'string' },
    days: { type: 'string' },
    by: { type: 'string' },
    limit: { type: 'string' },
    json: { type: 'boolean' },
  });
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`);
  const usage = await performCommand(db, ops.getUsage, { key: values.key, days: values.days, groupBy: values.by, limit: values.limit });
  if (values.json) {
    console.log(JSON.stringify(usage, null, 2));
    return;
  }
  console.log(`Requests from ${usage.from} to ${usage.to}, by ${usage.groupBy}:`);
  if (usage.rows.length === 0) console.log('(none counted)');
  for (const r of usage.rows) {
    const what = [r.period, r.key ? `${r.key.prefix} ${r.key.name}` : undefined, r.endpoint].filter(Boolean).join('  ');
    console.log(`${what}  ${r.requests} requests (${r.clientErrors} 4xx, ${r.serverErrors} 5xx)`);
  }
}
