import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLError,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLScalarType,
  GraphQLSchema,
  GraphQLString,
  Kind,
  coerceInputValue,
  isInputObjectType,
  isListType,
  isNonNullType,
  type GraphQLInputType,
  type ValueNode,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLInputFieldConfigMap,
  type GraphQLOutputType,
} from 'graphql';
import type { FieldKind } from '../../shared/db/entityView.js';
import { blockHeightType } from './blocks.js';
import { ENTITIES, type Entity, type EntityName } from './entities.js';
import { failureField } from './opFailure.js';
import { resolveCollection, resolveMeta, resolveRelation, resolveSingle, type GraphqlContext } from './resolvers.js';
import { moduleFields } from './modules.js';
import { LIMITS, OPERATORS } from './where.js';

/**
 * The GraphQL schema of every network's subgraph, in graph-node's naming: an entity type per
 * entity, `<Entity>_filter` and `<Entity>_orderBy` for its collections, `OrderDirection`, and
 * `_meta`. It is built from the entity catalogue (entities.ts), so a field added to a view is
 * queryable, filterable and orderable at once.
 */

const DECIMAL = /^-?\d{1,78}$/;
const HEX = /^0x([0-9a-fA-F]{2})*$/;

/** Big integers as decimal strings (the subgraph's BigInt): accepts digits or an integer literal. */
const BigIntScalar = new GraphQLScalarType({
  name: 'BigInt',
  description: 'An integer of any size, as a decimal string.',
  serialize: (value) => String(value),
  parseValue(value) {
    const digits = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
    if (typeof digits !== 'string' || !DECIMAL.test(digits))
      throw new GraphQLError(`BigInt takes decimal digits, got ${JSON.stringify(value)}`);
    return digits;
  },
  parseLiteral(ast) {
    if ((ast.kind === Kind.STRING || ast.kind === Kind.INT) && DECIMAL.test(ast.value)) return ast.value;
    throw new GraphQLError('BigInt takes decimal digits', { nodes: ast });
  },
});

/** Byte strings as 0x-prefixed hex, answered in lower case; accepted in any case. */
const BytesScalar = new GraphQLScalarType({
  name: 'Bytes',
  description: 'Bytes as 0x-prefixed hex (lower case in answers).',
  serialize: (value) => String(value),
  parseValue(value) {
    if (typeof value !== 'string' || !HEX.test(value))
      throw new GraphQLError(`Bytes takes 0x-prefixed hex of whole bytes, got ${JSON.stringify(value)}`);
    return value.toLowerCase();
  },
  parseLiteral(ast) {
    if (ast.kind === Kind.STRING && HEX.test(ast.value)) return ast.value.toLowerCase();
    throw new GraphQLError('Bytes takes 0x-prefixed hex of whole bytes', { nodes: ast });
  },
});

const SCALARS: Record<FieldKind | 'ID', GraphQLScalarType> = {
  ID: GraphQLID,
  Bytes: BytesScalar,
  BigInt: BigIntScalar,
  Int: GraphQLInt,
  String: GraphQLString,
  Boolean: GraphQLBoolean,
};

const OrderDirection = new GraphQLEnumType({ name: 'OrderDirection', values: { asc: {}, desc: {} } });

const Block = new GraphQLObjectType({
  name: '_Block_',
  fields: {
    hash: { type: BytesScalar },
    number: { type: new GraphQLNonNull(GraphQLInt) },
    timestamp: { type: GraphQLInt },
    parentHash: { type: BytesScalar },
  },
});

/** `block: {hash | number | number_gte}` on top-level fields and `_meta` (server/graphql/blocks.ts). */
const BlockHeight = blockHeightType(BytesScalar);

const Meta = new GraphQLObjectType({
  name: '_Meta_',
  description: 'The indexed head of the network, or the block `_meta(block:)` names.',
  fields: {
    block: { type: new GraphQLNonNull(Block) },
    deployment: { type: new GraphQLNonNull(GraphQLString) },
    hasIndexingErrors: { type: new GraphQLNonNull(GraphQLBoolean) },
  },
});

/** The field kinds of an entity's filterable, orderable fields, id first. */
const kindsOf = (entity: Entity): Array<[string, FieldKind | 'ID']> => [
  ['id', 'ID'],
  ...Object.entries(entity.view.fields).map(([name, field]): [string, FieldKind] => [name, field.kind]),
];

/**
 * A filter argument's literal as graphql-js would coerce it, reading only the fields the literal
 * writes. The document was validated against the published schema, so every field and scalar in it
 * fits; what can still be wrong is a variable's value, refused as graphql-js refuses it: an unset
 * variable leaves its field out, and an unset or null one where the list item must not be null makes
 * the argument invalid.
 */
function filterLiteral(node: ValueNode, type: GraphQLInputType, variables: Record<string, unknown> | null | undefined): unknown {
  if (node.kind === Kind.VARIABLE) {
    const value = variables?.[node.name.value];
    if (value === null && isNonNullType(type)) throw new GraphQLError(`Variable "$${node.name.value}" must not be null here`);
    return value;
  }
  if (isNonNullType(type)) return filterLiteral(node, type.ofType, variables);
  if (node.kind === Kind.NULL) return null;
  if (isListType(type)) {
    const itemType = type.ofType;
    const item = (n: ValueNode) => {
      const value = filterLiteral(n, itemType, variables);
      if (value !== undefined) return value;
      if (isNonNullType(itemType)) throw new GraphQLError('A list item must not be unset');
      return null;
    };
    return node.kind === Kind.LIST ? node.values.map(item) : [item(node)];
  }
  if (isInputObjectType(type)) {
    if (node.kind !== Kind.OBJECT) throw new GraphQLError(`${type.name} takes an object`);
    const fields = type.getFields();
    const value: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const field of node.fields) {
      const fieldValue = filterLiteral(field.value, fields[field.name.value]!.type, variables);
      if (fieldValue !== undefined) value[field.name.value] = fieldValue;
    }
    return value;
  }
  return type.parseLiteral(node, variables);
}

/**
 * For execution only, a filter type as a scalar of the same name taking the literal as the document
 * wrote it. graphql-js coerces an input object literal by visiting every field its type has, written
 * or not (some 340 for `UserOp_filter`), for each object in it: close to half of graphql-js's CPU
 * on the address activity's answer went to its `where`. A variable's value is still coerced against
 * the whole type.
 */
const asExecutedFilter = (filter: GraphQLInputObjectType) =>
  new GraphQLScalarType({
    name: filter.name,
    parseValue: (value) => coerceInputValue(value, filter),
    parseLiteral: (node, variables) => filterLiteral(node, filter, variables),
  });

/** A filter argument's type: the published input object, or the executed scalar (see asExecutedFilter). */
type FilterArgument = (filter: GraphQLInputObjectType) => GraphQLInputType;

function buildTypes(filterArgument: FilterArgument) {
  const objects = new Map<EntityName, GraphQLObjectType>();
  const filters = new Map<EntityName, GraphQLInputObjectType>();
  const orders = new Map<EntityName, GraphQLEnumType>();

  for (const entity of Object.values(ENTITIES)) {
    const filter: GraphQLInputObjectType = new GraphQLInputObjectType({
      name: `${entity.name}_filter`,
      fields: () => {
        const fields: GraphQLInputFieldConfigMap = {};
        for (const [name, kind] of kindsOf(entity)) {
          for (const op of OPERATORS[kind]) {
            const list = op === '_in' || op === '_not_in';
            fields[`${name}${op}`] = { type: list ? new GraphQLList(new GraphQLNonNull(SCALARS[kind])) : SCALARS[kind] };
          }
        }
        fields.and = { type: new GraphQLList(filter) };
        fields.or = { type: new GraphQLList(filter) };
        return fields;
      },
    });
    filters.set(entity.name, filter);
    orders.set(
      entity.name,
      new GraphQLEnumType({ name: `${entity.name}_orderBy`, values: Object.fromEntries(kindsOf(entity).map(([name]) => [name, {}])) }),
    );
  }

  const whereTypes = new Map([...filters].map(([name, filter]) => [name, filterArgument(filter)]));
  const listArgs = (name: EntityName) => ({
    first: { type: GraphQLInt, defaultValue: LIMITS.defaultFirst },
    skip: { type: GraphQLInt, defaultValue: 0 },
    orderBy: { type: orders.get(name)! },
    orderDirection: { type: OrderDirection },
    where: { type: whereTypes.get(name)! },
  });

  for (const entity of Object.values(ENTITIES)) {
    objects.set(
      entity.name,
      new GraphQLObjectType<unknown, GraphqlContext>({
        name: entity.name,
        description: entity.description,
        fields: () => {
          const fields: GraphQLFieldConfigMap<unknown, GraphqlContext> = { id: { type: new GraphQLNonNull(GraphQLID) } };
          for (const [name, field] of Object.entries(entity.view.fields)) {
            const type = SCALARS[field.kind];
            fields[name] = { type: field.nullable ? type : new GraphQLNonNull(type) };
          }
          if (entity.network) fields.network = { type: new GraphQLNonNull(GraphQLString), resolve: (_p, _a, ctx) => ctx.network.name };
          if (entity.name === 'UserOp') fields.failure = failureField(BytesScalar) as GraphQLFieldConfig<unknown, GraphqlContext>;
          for (const [name, relation] of Object.entries(entity.relations)) {
            const target = objects.get(relation.entity)!;
            const type: GraphQLOutputType = relation.list ? new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(target))) : target;
            fields[name] = {
              type,
              description: relation.description,
              ...(relation.list ? { args: listArgs(relation.entity) } : {}),
              resolve: resolveRelation(entity, name) as GraphQLFieldConfig<unknown, GraphqlContext>['resolve'],
            };
          }
          return fields;
        },
      }),
    );
  }
  return { objects, listArgs };
}

function buildSchema(filterArgument: FilterArgument): GraphQLSchema {
  const { objects, listArgs } = buildTypes(filterArgument);
  const query: GraphQLFieldConfigMap<unknown, GraphqlContext> = {};
  for (const entity of Object.values(ENTITIES)) {
    const type = objects.get(entity.name)!;
    if (entity.collection) {
      query[entity.collection] = {
        type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(type))),
        args: { ...listArgs(entity.name), block: { type: BlockHeight } },
        resolve: resolveCollection(entity) as GraphQLFieldConfig<unknown, GraphqlContext>['resolve'],
      };
    }
    if (entity.single) {
      query[entity.single] = {
        type,
        args: { id: { type: new GraphQLNonNull(GraphQLID) }, block: { type: BlockHeight } },
        resolve: resolveSingle(entity) as GraphQLFieldConfig<unknown, GraphqlContext>['resolve'],
      };
    }
  }
  query._meta = { type: Meta, args: { block: { type: BlockHeight } }, resolve: resolveMeta };
  Object.assign(query, moduleFields({ Bytes: BytesScalar, BigInt: BigIntScalar }));
  return new GraphQLSchema({ query: new GraphQLObjectType({ name: 'Query', fields: query }) });
}

/** One schema for every network (the network is in the request's context): published, validated against. */
export const subgraphSchema = buildSchema((filter) => filter);

/**
 * The same schema with the filter arguments as executed scalars (asExecutedFilter): what a validated
 * document runs against, unless it asks for the schema itself (introspection answers the published one).
 */
export const executionSchema = buildSchema(asExecutedFilter);
