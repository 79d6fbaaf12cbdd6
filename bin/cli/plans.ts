import type { z } from 'zod';
import * as ops from '../../server/admin/operations/index.js';
import type { Db } from '../../shared/db/client.js';
import { listOrNull, parse, performCommand, UsageError, valueOrNull } from './args.js';

export const PLANS_USAGE = `usage: opscan plans create NAME --rate-limit N [LIMITS]   create a plan
       opscan plans list [--json]                        plans, with how many keys each has
       opscan plans update PLAN [--name NAME] [--rate-limit N] [LIMITS]
                                                         change a plan (PLAN: its id or name); its keys follow at once
       opscan plans delete PLAN                          delete a plan no key uses
LIMITS: --burst N (default 3 × rate)  --per-day N|none  --per-month N|none  --webhooks N|none
        --networks NAME,NAME|all
Attach keys with opscan keys create|update|import … --plan PLAN.`;

type PlanOut = z.input<typeof ops.createPlan.output>;

function describe(p: PlanOut & { keys?: number }): string {
  const cap = (n: number | null, unit: string) => (n === null ? `no ${unit} cap` : `${n}/${unit}`);
  const parts = [
    `${p.rateLimitPerSecond}/s burst ${p.burst}`,
    cap(p.requestsPerDay, 'day'),
    cap(p.requestsPerMonth, 'month'),
    p.webhooksAllowed === null ? 'webhooks uncapped' : `${p.webhooksAllowed} webhooks`,
    p.networks ? `networks ${p.networks.join(',')}` : 'all networks',
    ...(p.keys === undefined ? [] : [`${p.keys} key(s)`]),
  ];
  return `${p.name}  (#${p.id}; ${parts.join('; ')})`;
}

export async function plansCommand(db: Db, args: string[]): Promise<void> {
  const [command, ...rest] = args;
  const { values, positionals } = parse(rest, {
    name: { type: 'string' },
    'rate-limit': { type: 'string' },
    burst: { type: 'string' },
    'per-day': { type: 'string' },
    'per-month': { type: 'string' },
    webhooks: { type: 'string' },
    networks: { type: 'string' },
    json: { type: 'boolean' },
  });
  const limits = {
    rateLimitPerSecond: values['rate-limit'],
    burst: values.burst,
    requestsPerDay: valueOrNull(values['per-day'], 'none'),
    requestsPerMonth: valueOrNull(values['per-month'], 'none'),
    webhooksAllowed: valueOrNull(values.webhooks, 'none'),
    networks: listOrNull(values.networks, 'all'),
  };
  const planArg = { plan: 'PLAN' };
  switch (command) {
    case 'create': {
      const name = positionals[0];
      if (!name) throw new UsageError('plans create needs a NAME');
      const created = await performCommand(db, ops.createPlan, { name, ...limits }, { name: 'NAME' });
      console.log(`Created plan ${describe(created)}`);
      return;
    }
    case 'list': {
      const { plans } = await performCommand(db, ops.listPlans, {});
      if (values.json) console.log(JSON.stringify(plans, null, 2));
      else if (plans.length === 0) console.log('No plans yet: opscan plans create NAME --rate-limit N');
      else for (const p of plans) console.log(describe(p));
      return;
    }
    case 'update': {
      const plan = positionals[0];
      if (!plan) throw new UsageError('plans update needs a PLAN');
      const updated = await performCommand(db, ops.updatePlan, { plan, name: values.name, ...limits }, planArg);
      console.log(`Updated plan ${describe(updated)}`);
      return;
    }
    case 'delete': {
      const plan = positionals[0];
      if (!plan) throw new UsageError('plans delete needs a PLAN');
      const { deleted } = await performCommand(db, ops.deletePlan, { plan }, planArg);
      console.log(`Deleted plan ${deleted.name}`);
      return;
    }
    default:
      throw new UsageError(command ? `unknown plans command "${command}"` : 'plans needs a command');
  }
}
