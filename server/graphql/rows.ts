import { prepared, type Queryable } from '../../shared/db/client.js';
import type { EntityView, PgType } from '../../shared/db/entityView.js';
import type { Relation } from './entities.js';
import { checkPage, compileOrder, compileTopLevelOr, compileWhere, Params, type Order, type Where } from './where.js';

/**
 * The statements the resolvers run: one per collection field, and one per relation field per
 * level of the answer (all parents at once). Each selects only the fields the query asks for, and
 * each is bounded: `first` rows, or `first` rows per parent.
 */

export type Row = Record<string, unknown>;
export type ListArgs = Order & { first?: number; skip?: number; where?: Where | null };

/**
 * Rows of an entity view: the list arguments of the field, the view fields its selection asks for,
 * and the block they are read as of (rows written after it left out; only views with a `block` column).
 */
export type RowsQuery = { view: EntityView; args: ListArgs; fields: ReadonlySet<string>; block?: number | undefined };

/** The parents whose related rows a relation field asks for: their join keys, typed for unnest. */
export type Parents = { relation: Relation; keys: ReadonlyArray<readonly unknown[]>; keyTypes: readonly PgType[] };

/** `<sql> as "<field>"` for the id and each requested field of the view. */
function selectList(view: EntityView, fields: ReadonlySet<string>): string {
  const columns = [`${view.id.sql} as "id"`];
  for (const name of fields) {
    const field = view.fields[name];
    if (field) columns.push(`${field.sql} as "${name}"`);
  }
  return columns.join(', ');
}

function conditions(view: EntityView, where: string, extra?: string): string {
  return ['t.chain_id = $1', view.where, extra, where].filter(Boolean).join(' and ');
}

/**
 * The condition of rows as of a block (undefined: the latest), a checked integer written into the text.
 * A view without a block column (running totals) reads as it is: it is answered at the indexed head
 * only, which server/graphql/blocks.ts checks first.
 */
function asOfBlock(view: EntityView, block: number | undefined): string | undefined {
  if (block === undefined || !view.block) return undefined;
  if (!Number.isSafeInteger(block)) throw new Error(`rows as of block ${block}: not an integer`);
  return `${view.block} <= ${block}`;
}

/** A view reading one table as `t`: a branch of a union can select `t.*` and the outer query read it as `t`. */
const ONE_TABLE = /^\w+ t$/;

/** Branches of a top-level `or` read as a union; more are compiled as one `or`. */
const MAX_UNION_BRANCHES = 4;

/**
 * A page of the entity's rows matching `where`. The page's bounds (checked integers) are written into
 * the text rather than passed as parameters, and a first page's statement is prepared: PostgreSQL
 * parses it once per connection and, where its estimates allow, plans it once (the accounts lookup,
 * the address activity's union of sender and target). With `limit $n` a generic plan assumes a
 * tenth of the table and is never chosen. Later pages run unnamed, so paging does not fill a
 * connection with one statement per page. Rows as of a block (`block`) are the view's rows with its
 * `block` column at most that block.
 */
export async function listRows(db: Queryable, chainId: number, { view, args, fields, block }: RowsQuery): Promise<Row[]> {
  const page = checkPage(args);
  if (page.first === 0) return [];
  const params = new Params(chainId);
  const order = compileOrder(view, args);
  const asOf = asOfBlock(view, block);
  const or = ONE_TABLE.test(view.from) ? compileTopLevelOr(view, args.where, params, MAX_UNION_BRANCHES) : null;
  // Each branch of a union reads as of the block: the other top-level conditions go into every branch.
  const branches = or && asOf ? { ...or, rest: `${or.rest} and ${asOf}` } : or;
  const from = branches ? `(${unionOfBranches(view, branches, order, String(page.first + page.skip))}) t` : view.from;
  const where = or ? 'true' : compileWhere(view, args.where, params);
  const text = `select ${selectList(view, fields)} from ${from} where ${conditions(view, where, or ? undefined : asOf)}
    order by ${order} limit ${page.first} offset ${page.skip}`;
  // A block in the text would give a statement per block asked: those run unnamed too.
  return (await db.query<Row>(page.skip === 0 && asOf === undefined ? prepared(text) : text, params.values)).rows;
}

/**
 * The rows matching `rest and (b1 or b2 ...)` as a UNION ALL of one query per branch, each with its
 * own top `limit` rows in the page's order. PostgreSQL plans an `or` across columns as a bitmap of
 * both indexes: it reads every matching row (all of a busy sender's ops) to sort them, where each
 * branch alone walks its own index in order and stops after `limit` rows. A row matching several
 * branches comes from the first only (`bN is not true` in the later ones), so the union holds each
 * row once, and the page of the whole is within the branches' first `limit` rows.
 */
function unionOfBranches(view: EntityView, or: { rest: string; branches: string[] }, order: string, limit: string): string {
  return or.branches
    .map((branch, i) => {
      const earlier = or.branches.slice(0, i).map((b) => `(${b}) is not true`);
      const where = [or.rest === 'true' ? null : or.rest, `(${branch})`, ...earlier].filter(Boolean).join(' and ');
      return `(select t.* from ${view.from} where ${conditions(view, where)} order by ${order} limit ${limit})`;
    })
    .join(' union all ');
}

/**
 * The related rows of many parents in one statement: the parents' key tuples are unnested and
 * each reads its own page through a lateral subquery (an index lookup per parent), so a parent with
 * a million children costs what one with `first` does. Answers one list per parent, in order: the
 * nested loop over the unnested keys yields each parent's page in turn, in the page's own order.
 */
export async function listRowsPerParent(
  db: Queryable,
  chainId: number,
  { view, args, fields, block }: RowsQuery,
  { relation, keys: parentKeys, keyTypes }: Parents,
): Promise<Row[][]> {
  const page = relation.list ? checkPage(args) : { first: 1, skip: 0 };
  const answers: Row[][] = parentKeys.map(() => []);
  if (page.first === 0 || parentKeys.length === 0) return answers;
  const params = new Params(chainId);
  const keyArrays = keyTypes.map((type, i) =>
    params.add(
      parentKeys.map((k) => k[i]),
      `${type}[]`,
    ),
  );
  const keyNames = keyTypes.map((_, i) => `k${i}`);
  const join = [...relation.on.map(([, column], i) => `${column} = p.k${i}`), relation.where, asOfBlock(view, block)]
    .filter(Boolean)
    .join(' and ');
  const where = compileWhere(view, args.where, params);
  const text = `select p.parent_index, c.* from unnest(${keyArrays.join(', ')}) with ordinality as p(${keyNames.join(', ')}, parent_index)
    cross join lateral (
      select ${selectList(view, fields)} from ${view.from} where ${conditions(view, where, join)}
      order by ${compileOrder(view, args)} limit ${params.add(page.first, 'int4')} offset ${params.add(page.skip, 'int4')}
    ) c`;
  const { rows } = await db.query<Row & { parent_index: string }>(text, params.values);
  for (const { parent_index, ...row } of rows) answers[Number(parent_index) - 1]!.push(row);
  return answers;
}
