/**
 * A table read as an entity of the subgraph-style GraphQL endpoint (server/graphql): the FROM
 * clause, the SQL of each field, and how the entity's id maps to indexed columns. Each table module
 * declares its view beside its other reads; server/graphql compiles filters, orderings and pages
 * over it. Conventions: the row alias is `t`, and `$1` is always the network's chain id.
 */

/** The subgraph scalar a field answers as (BigInt and Bytes travel as strings). */
export type FieldKind = 'Bytes' | 'BigInt' | 'Int' | 'String' | 'Boolean';

/**
 * The SQL type a compared value is cast to (so an index on a bigint column stays usable). A 'bytea'
 * value is given as 0x-hex and sent as bytea (server/graphql/where.ts Params).
 */
export type PgType = 'text' | 'bytea' | 'int4' | 'int8' | 'numeric' | 'bool';

export type ViewField = {
  kind: FieldKind;
  pg: PgType;
  sql: string;
  nullable?: boolean;
  /** An indexed expression that sorts like `sql` (ops sort by block number for block time). */
  order?: string;
  /** Equality with one value (`param`) through an index, for a field whose `sql` is derived. */
  equals?: (param: string) => string;
  /** Membership in a list of values (`param`, an array) through an index, for the same reason. */
  equalsAny?: (param: string) => string;
};

export type EntityView = {
  /** FROM clause, row alias `t`. */
  from: string;
  /** Condition every row of the entity meets beside `t.chain_id = $1` (e.g. an entity_stats kind). */
  where?: string;
  id: {
    sql: string;
    /** Columns that sort like the id: the default order and every order's tie-break. */
    order: string[];
    /**
     * When the id joins several columns with '-' (`<userOpHash>-<logIndex>`), those columns: an id
     * equality becomes equalities on them, which an index can answer.
     */
    parts?: Array<{ column: string; pg: PgType }>;
    /**
     * When the id is one bytea column's 0x-hex (an address), that column: comparisons with
     * lower-case hex of whole bytes (the only form an id takes) go to the column and its index.
     */
    bytes?: string;
  };
  fields: Record<string, ViewField>;
  /**
   * The block a row was written in, for rows never changed once written (an op, a bundle, an event):
   * the rows as of block N are those with it at most N. Absent for rows that hold running totals,
   * which cannot be read as of an earlier block.
   */
  block?: string;
};

/** A column read as is. */
export const column = (sql: string, kind: FieldKind, pg: PgType, nullable = false): ViewField => ({ kind, pg, sql, nullable });

/** A bytea column's value as the 0x-hex text answers carry (for SQL that builds text from it). */
export const hexOf = (bytes: string): string => `'0x' || encode(${bytes}, 'hex')`;

/** A constant `0x…` as a bytea literal (a default a bytea field answers with, e.g. the zero address). */
export const byteaLiteral = (hex: string): string => `'\\x${hex.slice(2)}'::bytea`;

/** The id of rows keyed by one bytea column (an address): its 0x-hex. */
export const bytesId = (bytes: string): EntityView['id'] => ({ sql: hexOf(bytes), order: [bytes], bytes });

/**
 * The id `<hash>-<index>` of rows keyed by a hash and an integer (an op and its log, a bundle in its
 * transaction); `pg`: the hash column's type.
 */
export const hashIndexId = (hash: string, index: string, pg: 'text' | 'bytea' = 'text'): EntityView['id'] => ({
  sql: `${pg === 'bytea' ? hexOf(hash) : hash} || '-' || ${index}`,
  order: [hash, index],
  parts: [
    { column: hash, pg },
    { column: index, pg: 'int4' },
  ],
});
