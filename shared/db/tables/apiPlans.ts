import type { Queryable } from '../client.js';
import { updateById } from '../updateById.js';

/** What a key on this plan may do per unit of time; null quotas are uncapped. */
export type ApiPlan = {
  id: string;
  name: string;
  rateLimitPerSecond: number;
  burst: number;
  requestsPerDay: number | null;
  requestsPerMonth: number | null;
  webhooksAllowed: number | null;
  /** Network names (null: all). */
  networks: string[] | null;
  createdAt: Date;
  updatedAt: Date;
};

type ApiPlanRow = {
  id: string;
  name: string;
  rate_limit_per_second: number;
  burst: number;
  requests_per_day: string | null;
  requests_per_month: string | null;
  webhooks_allowed: number | null;
  networks: string[] | null;
  created_at: Date;
  updated_at: Date;
};

const numberOrNull = (v: string | number | null) => (v === null ? null : Number(v));

const toApiPlan = (r: ApiPlanRow): ApiPlan => ({
  id: String(r.id),
  name: r.name,
  rateLimitPerSecond: r.rate_limit_per_second,
  burst: r.burst,
  requestsPerDay: numberOrNull(r.requests_per_day),
  requestsPerMonth: numberOrNull(r.requests_per_month),
  webhooksAllowed: r.webhooks_allowed,
  networks: r.networks,
  createdAt: new Date(r.created_at),
  updatedAt: new Date(r.updated_at),
});

const COLUMNS =
  'id, name, rate_limit_per_second, burst, requests_per_day, requests_per_month, webhooks_allowed, networks, created_at, updated_at';

export type ApiPlanInput = Omit<ApiPlan, 'id' | 'createdAt' | 'updatedAt'>;

export async function insert(db: Queryable, plan: ApiPlanInput): Promise<ApiPlan> {
  const { rows } = await db.query<ApiPlanRow>(
    `insert into api_plans (name, rate_limit_per_second, burst, requests_per_day, requests_per_month, webhooks_allowed, networks)
     values ($1, $2, $3, $4, $5, $6, $7) returning ${COLUMNS}`,
    [plan.name, plan.rateLimitPerSecond, plan.burst, plan.requestsPerDay, plan.requestsPerMonth, plan.webhooksAllowed, plan.networks],
  );
  return toApiPlan(rows[0]!);
}

export async function findById(db: Queryable, id: string): Promise<ApiPlan | null> {
  const { rows } = await db.query<ApiPlanRow>(`select ${COLUMNS} from api_plans where id = $1`, [id]);
  return rows[0] ? toApiPlan(rows[0]) : null;
}

export async function findByName(db: Queryable, name: string): Promise<ApiPlan | null> {
  const { rows } = await db.query<ApiPlanRow>(`select ${COLUMNS} from api_plans where name = $1`, [name]);
  return rows[0] ? toApiPlan(rows[0]) : null;
}

export async function list(db: Queryable): Promise<ApiPlan[]> {
  const { rows } = await db.query<ApiPlanRow>(`select ${COLUMNS} from api_plans order by id`);
  return rows.map(toApiPlan);
}

const CHANGEABLE: Record<keyof ApiPlanInput, string> = {
  name: 'name',
  rateLimitPerSecond: 'rate_limit_per_second',
  burst: 'burst',
  requestsPerDay: 'requests_per_day',
  requestsPerMonth: 'requests_per_month',
  webhooksAllowed: 'webhooks_allowed',
  networks: 'networks',
};

/** Applies `changes` (absent fields kept, null clears a cap); null when there is no such plan. */
export async function update(db: Queryable, id: string, changes: Partial<ApiPlanInput>): Promise<ApiPlan | null> {
  const row = await updateById<ApiPlanInput, ApiPlanRow>(db, { table: 'api_plans', columns: CHANGEABLE, returning: COLUMNS }, id, changes);
  return row ? toApiPlan(row) : null;
}

/** Deletes the plan; false when there is none. A plan keys still reference cannot be deleted (foreign key). */
export async function deleteById(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(`delete from api_plans where id = $1`, [id]);
  return (rowCount ?? 0) > 0;
}
