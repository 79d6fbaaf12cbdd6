import { GraphQLError } from 'graphql';
import { bytea } from '../../shared/db/client.js';
import type { EntityView, FieldKind, PgType, ViewField } from '../../shared/db/entityView.js';

/**
 * The Graph's filter dialect compiled to SQL over an entity view: `where` objects whose keys are a
 * field plus an operator suffix (`blockNumber_gte`), nested `and` / `or`, `orderBy` /
 * `orderDirection`, and `first` / `skip` pages. Every value travels as a typed parameter, checked
 * here against its field's kind (variables reach filters uncoerced when graph-node's lenient
 * variable typing is in force, see limits.ts), and everything a caller can grow is bounded.
 */

export const LIMITS = {
  defaultFirst: 100,
  maxFirst: 1000,
  maxSkip: 5000,
  /** Values of one `_in` / `_not_in` list. */
  maxList: 500,
  /** Conditions in one `where`, all levels of `and` / `or` together. */
  maxConditions: 100,
  /** Nesting of `and` / `or`. */
  maxFilterDepth: 8,
} as const;

export type Operator = '' | '_not' | '_gt' | '_gte' | '_lt' | '_lte' | '_in' | '_not_in' | '_contains' | '_not_contains';

/** The operators each kind of field offers (the subgraph's filter input types list them). */
export const OPERATORS: Readonly<Record<FieldKind | 'ID', readonly Operator[]>> = {
  ID: ['', '_not', '_gt', '_gte', '_lt', '_lte', '_in', '_not_in'],
  Bytes: ['', '_not', '_gt', '_gte', '_lt', '_lte', '_in', '_not_in', '_contains', '_not_contains'],
  String: ['', '_not', '_gt', '_gte', '_lt', '_lte', '_in', '_not_in', '_contains', '_not_contains'],
  BigInt: ['', '_not', '_gt', '_gte', '_lt', '_lte', '_in', '_not_in'],
  Int: ['', '_not', '_gt', '_gte', '_lt', '_lte', '_in', '_not_in'],
  Boolean: ['', '_not', '_in', '_not_in'],
};

/** Longest first, so `_not_in` is not read as `_in`. */
const SUFFIXES = ['_not_contains', '_not_in', '_contains', '_not', '_gte', '_lte', '_gt', '_lt', '_in'] as const;

/** Positional parameters of one statement; `$1` is the chain id, added by the caller. */
export class Params {
  readonly values: unknown[];
  constructor(chainId: number) {
    this.values = [chainId];
  }
  add(value: unknown, pg: PgType | `${PgType}[]`): string {
    // Bytes are compared as 0x-hex values; a bytea column takes them as bytea's text (shared/db/bytea.ts).
    if (pg === 'bytea') value = bytea(value as string);
    if (pg === 'bytea[]') value = (value as string[]).map((v) => bytea(v));
    this.values.push(value);
    return `$${this.values.length}::${pg}`;
  }
}

export type Where = Record<string, unknown>;
export type Page = { first: number; skip: number };
export type Order = { orderBy?: string; orderDirection?: 'asc' | 'desc' };

const fail = (message: string): never => {
  throw new GraphQLError(message);
};

export function checkPage(args: { first?: unknown; skip?: unknown }): Page {
  const first = args.first ?? LIMITS.defaultFirst;
  const skip = args.skip ?? 0;
  if (!Number.isInteger(first) || (first as number) < 0 || (first as number) > LIMITS.maxFirst) {
    fail(`The \`first\` argument must be between 0 and ${LIMITS.maxFirst}, but is ${JSON.stringify(first)}`);
  }
  if (!Number.isInteger(skip) || (skip as number) < 0 || (skip as number) > LIMITS.maxSkip) {
    fail(`The \`skip\` argument must be between 0 and ${LIMITS.maxSkip}, but is ${JSON.stringify(skip)}`);
  }
  return { first: first as number, skip: skip as number };
}

/** `order by` text: the ordered field, then the id's columns in the same direction (a total order). */
export function compileOrder(view: EntityView, order: Order): string {
  const direction = order.orderDirection === 'desc' ? 'desc' : 'asc';
  const field = order.orderBy && order.orderBy !== 'id' ? view.fields[order.orderBy] : undefined;
  if (order.orderBy && order.orderBy !== 'id' && !field) fail(`Unknown orderBy field "${order.orderBy}"`);
  const columns = [...(field ? [field.order ?? field.sql] : []), ...view.id.order];
  return columns.map((c) => `${c} ${direction}`).join(', ');
}

/** One `where` being compiled: its entity, the statement's parameters, the conditions so far. */
type Compilation = { view: EntityView; params: Params; conditions: number };

/** The SQL condition of a `where` object ('true' when empty). */
export function compileWhere(view: EntityView, where: Where | null | undefined, params: Params): string {
  return where ? compileFilter({ view, params, conditions: 0 }, where, 0) : 'true';
}

/**
 * A `where` whose top level is an `or` of 2 to `maxBranches` filters (the subgraph client's
 * `or: [{sender: $a}, {target: $a}]`), compiled branch by branch: the condition of the other
 * top-level keys (`rest`, 'true' when none) and each branch's, checked and bounded as compileWhere
 * does. Null for any other `where` (compileWhere then compiles it, and reports what is wrong with it).
 */
export function compileTopLevelOr(
  view: EntityView,
  where: Where | null | undefined,
  params: Params,
  maxBranches: number,
): { rest: string; branches: string[] } | null {
  const branches = where?.or;
  if (!Array.isArray(branches) || branches.length < 2 || branches.length > maxBranches) return null;
  if (branches.some((branch) => !branch || typeof branch !== 'object')) return null;
  // The `or` key counts as one condition, as in compileFilter.
  const c: Compilation = { view, params, conditions: 1 };
  const { or: _, ...rest } = where!;
  return { rest: compileFilter(c, rest, 0), branches: branches.map((branch) => compileFilter(c, branch as Where, 1)) };
}

function compileFilter(c: Compilation, where: Where, depth: number): string {
  if (depth > LIMITS.maxFilterDepth) fail(`Filters nest \`and\`/\`or\` at most ${LIMITS.maxFilterDepth} levels deep`);
  const parts: string[] = [];
  for (const [key, value] of Object.entries(where)) {
    if (value === undefined) continue;
    if (++c.conditions > LIMITS.maxConditions) fail(`A filter has at most ${LIMITS.maxConditions} conditions`);
    if (key === 'and' || key === 'or') {
      if (!Array.isArray(value)) fail(`\`${key}\` takes a list of filters`);
      const branches = (value as unknown[]).map((branch) => {
        if (!branch || typeof branch !== 'object') return fail(`\`${key}\` takes a list of filters`);
        return `(${compileFilter(c, branch as Where, depth + 1)})`;
      });
      if (branches.length > 0) parts.push(`(${branches.join(key === 'and' ? ' and ' : ' or ')})`);
      continue;
    }
    parts.push(compileCondition(c, key, value));
  }
  return parts.length > 0 ? parts.join(' and ') : 'true';
}

function splitKey(key: string): [field: string, op: Operator] {
  for (const suffix of SUFFIXES) {
    if (key.endsWith(suffix) && key.length > suffix.length) return [key.slice(0, -suffix.length), suffix];
  }
  return [key, ''];
}

function compileCondition(c: Compilation, key: string, value: unknown): string {
  const [name, op] = splitKey(key);
  if (name === 'id') return compileIdCondition(c, op, value);
  const field = c.view.fields[name];
  if (!field || !OPERATORS[field.kind].includes(op)) return fail(`Unknown filter "${key}"`);
  return compileFieldCondition(c.params, { ...field, name }, op, value);
}

function compileFieldCondition(params: Params, field: ViewField & { name: string }, op: Operator, value: unknown): string {
  const { sql, pg, name } = field;
  if (value === null) {
    if (op === '') return `${sql} is null`;
    if (op === '_not') return `${sql} is not null`;
    return fail(`Filter "${name}${op}" needs a value`);
  }
  switch (op) {
    case '': {
      const param = params.add(valueOf(field.kind, pg, value, name), paramType(field));
      return field.equals ? field.equals(param) : `${sql} = ${param}`;
    }
    case '_not':
      return `${sql} is distinct from ${params.add(valueOf(field.kind, pg, value, name), paramType(field))}`;
    case '_gt':
    case '_gte':
    case '_lt':
    case '_lte': {
      const comparison = { _gt: '>', _gte: '>=', _lt: '<', _lte: '<=' }[op];
      return `${sql} ${comparison} ${params.add(valueOf(field.kind, pg, value, name), paramType(field))}`;
    }
    case '_in':
    case '_not_in': {
      const param = params.add(
        listOf(value, name + op).map((v) => valueOf(field.kind, pg, v, name)),
        `${paramType(field)}[]`,
      );
      if (op === '_not_in') return `not coalesce(${sql} = any(${param}), false)`;
      return field.equalsAny ? field.equalsAny(param) : `${sql} = any(${param})`;
    }
    case '_contains':
    case '_not_contains': {
      const test = containsTest(field, value, name + op, params);
      return op === '_contains' ? test : `not coalesce(${test}, false)`;
    }
  }
}

/** Bytes match whole bytes (an even offset after `0x`); strings match anywhere. */
function containsTest(field: ViewField, value: unknown, name: string, params: Params): string {
  if (field.kind === 'Bytes' && field.pg === 'bytea') {
    return `position(${params.add(valueOf('Bytes', 'bytea', value, name), 'bytea')} in ${field.sql}) > 0`;
  }
  if (field.kind === 'Bytes') {
    const hex = (valueOf('Bytes', 'text', value, name) as string).slice(2);
    // Only hex digits reach the pattern, so nothing in it is a regex operator.
    return `${field.sql} ~ ${params.add(`^0x(..)*${hex}`, 'text')}`;
  }
  return `strpos(${field.sql}, ${params.add(valueOf('String', 'text', value, name), 'text')}) > 0`;
}

/**
 * Conditions on the id. When the id joins indexed columns (`<hash>-<logIndex>`), equality and
 * membership compare those columns; other comparisons (and ids of another shape, which match
 * nothing) use the id's text.
 */
function compileIdCondition({ view, params }: Compilation, op: Operator, value: unknown): string {
  if (!OPERATORS.ID.includes(op)) return fail(`Unknown filter "id${op}"`);
  if (view.id.bytes) return compileBytesIdCondition(params, view.id, op, value);
  const parts = view.id.parts;
  if (!parts || (op !== '' && op !== '_in') || value === null) {
    return compileFieldCondition(params, { name: 'id', kind: 'String', pg: 'text', sql: view.id.sql }, op, value);
  }
  const ids = op === '' ? [value] : listOf(value, 'id_in');
  const split = ids.map((id) => splitId(parts, valueOf('String', 'text', id, 'id') as string)).filter((s) => s !== null);
  if (split.length === 0) return 'false';
  if (op === '') return parts.map((p, i) => `${p.column} = ${params.add(split[0]![i], p.pg)}`).join(' and ');
  const arrays = parts.map((p, i) =>
    params.add(
      split.map((s) => s[i]),
      `${p.pg}[]`,
    ),
  );
  return `(${parts.map((p) => p.column).join(', ')}) in (select * from unnest(${arrays.join(', ')}))`;
}

/** Lower-case hex of whole bytes: the only form of an id that is a bytea column's hex. */
const ID_HEX = /^0x(?:[0-9a-f]{2})*$/;

/**
 * Conditions on an id that is one bytea column's hex (an address): equality, membership and order
 * with a value of the id's form compare the column (through its index), exactly as comparing the
 * id's text would; any other value is compared with the id's text (an equality matches nothing).
 */
function compileBytesIdCondition(params: Params, id: EntityView['id'], op: Operator, value: unknown): string {
  const asText = () => compileFieldCondition(params, { name: 'id', kind: 'String', pg: 'text', sql: id.sql }, op, value);
  const column = id.bytes!;
  const isIdHex = (v: unknown): v is string => ID_HEX.test(valueOf('String', 'text', v, 'id') as string);
  if (value === null) return asText();
  switch (op) {
    case '':
      return isIdHex(value) ? `${column} = ${params.add(value, 'bytea')}` : 'false';
    case '_in': {
      const ids = listOf(value, 'id_in').filter(isIdHex);
      return ids.length > 0 ? `${column} = any(${params.add(ids, 'bytea[]')})` : 'false';
    }
    case '_gt':
    case '_gte':
    case '_lt':
    case '_lte': {
      if (!isIdHex(value)) return asText();
      const comparison = { _gt: '>', _gte: '>=', _lt: '<', _lte: '<=' }[op];
      return `${column} ${comparison} ${params.add(value, 'bytea')}`;
    }
    default:
      return asText();
  }
}

function splitId(parts: NonNullable<EntityView['id']['parts']>, id: string): unknown[] | null {
  const pieces = id.split('-');
  if (pieces.length !== parts.length) return null;
  const values: unknown[] = [];
  for (const [i, part] of parts.entries()) {
    const piece = pieces[i]!;
    if (part.pg === 'text' || part.pg === 'bytea') {
      if (!/^0x[0-9a-fA-F]+$/.test(piece)) return null;
      // An odd number of digits is no bytea value (and no stored hash): it names no row.
      if (part.pg === 'bytea' && piece.length % 2 === 1) return null;
      values.push(piece.toLowerCase());
    } else {
      if (!/^\d{1,9}$/.test(piece)) return null;
      values.push(Number(piece));
    }
  }
  return values;
}

function listOf(value: unknown, name: string): unknown[] {
  if (!Array.isArray(value)) return fail(`Filter "${name}" takes a list`);
  if (value.length > LIMITS.maxList) fail(`Filter "${name}" takes at most ${LIMITS.maxList} values, got ${value.length}`);
  return value;
}

/** BigInt compares as numeric with numeric columns, as int8 otherwise (so integer indexes apply). */
const paramType = (field: ViewField): PgType => (field.kind === 'BigInt' ? (field.pg === 'numeric' ? 'numeric' : 'int8') : field.pg);

const INT8_MAX = 2n ** 63n - 1n;

/** A filter value checked against its field's kind, as the parameter to send. */
function valueOf(kind: FieldKind, pg: PgType, value: unknown, name: string): unknown {
  switch (kind) {
    case 'Bytes':
      if (typeof value === 'string' && /^0x([0-9a-fA-F]{2})*$/.test(value)) return value.toLowerCase();
      return fail(`Filter "${name}" takes Bytes (0x-prefixed hex of whole bytes), got ${JSON.stringify(value)}`);
    case 'BigInt': {
      const digits = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
      if (typeof digits !== 'string' || !/^-?\d{1,78}$/.test(digits)) {
        return fail(`Filter "${name}" takes a BigInt (decimal digits), got ${JSON.stringify(value)}`);
      }
      if (pg !== 'numeric' && (BigInt(digits) > INT8_MAX || BigInt(digits) < -INT8_MAX))
        fail(`Filter "${name}": ${digits} is out of range`);
      return digits;
    }
    case 'Int':
      if (Number.isInteger(value) && Math.abs(value as number) < 2 ** 31) return value;
      return fail(`Filter "${name}" takes an Int, got ${JSON.stringify(value)}`);
    case 'String':
      if (typeof value === 'string' && value.length <= 1000) return value;
      return fail(`Filter "${name}" takes a String of at most 1000 characters`);
    case 'Boolean':
      if (typeof value === 'boolean') return value;
      return fail(`Filter "${name}" takes a Boolean, got ${JSON.stringify(value)}`);
  }
}
