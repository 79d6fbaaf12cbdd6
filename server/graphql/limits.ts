import {
  GraphQLError,
  Kind,
  NoUndefinedVariablesRule,
  NoUnusedVariablesRule,
  VariablesInAllowedPositionRule,
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  isTypeSubTypeOf,
  parse,
  specifiedRules,
  typeFromAST,
  validate,
  type DocumentNode,
  type ExecutionArgs,
  type FragmentDefinitionNode,
  type GraphQLObjectType,
  type GraphQLSchema,
  type GraphQLType,
  type SelectionSetNode,
  type ValidationRule,
  type ValueNode,
} from 'graphql';
import { LIMITS } from './where.js';

/**
 * What keeps any one query from exhausting the process or the database, checked in the cheapest
 * order: the parser stops at a token budget; before the (quadratic in the worst case) standard
 * validation, one pass bounds aliases, depth and size; at execution, when variable values are
 * known, the rows the query may read are summed and bounded. Every refusal is a GraphQL error.
 *
 * Validation is graph-node's, which is more lenient than the specification in two ways real
 * clients rely on: variables used without being declared are unset
 * (the published client sends `first: $first` without declaring it), and declared variables may
 * be unused; a variable may also stand where a compatible scalar is expected (`Int` for `BigInt`).
 */

export const QUERY_LIMITS = {
  maxTokens: 4000,
  /** Nesting of fields (introspection aside). */
  maxDepth: 8,
  maxAliases: 30,
  /** Selections (fields and fragments) with fragments expanded: bounds the walks themselves. */
  maxSelections: 2000,
  /** Rows a query may read: each list field counts its `first` times the rows of its parents. */
  maxRows: 20_000,
} as const;

/**
 * Clients send the same few query texts again and again with other variables, and parsing and
 * validating one (the filter input types have hundreds of fields, which validation walks for every
 * object literal) cost more CPU than running it: the documents of the texts seen last are kept, and
 * a document that passed validation is not validated again. A document is never changed after
 * parsing (execution only reads it), so one can serve many requests.
 */
const KEPT_DOCUMENTS = 500;
/** Longer texts are parsed every time: the kept documents stay a few MB at most. */
const KEPT_SOURCE_CHARS = 10_000;
const documents = new Map<string, DocumentNode>();
const validDocuments = new WeakMap<DocumentNode, GraphQLSchema>();

export function parseQuery(source: string): DocumentNode {
  const kept = documents.get(source);
  if (kept) {
    // Least recently used first in the map's order: the one dropped when it is full.
    documents.delete(source);
    documents.set(source, kept);
    return kept;
  }
  const document = parse(source, { maxTokens: QUERY_LIMITS.maxTokens });
  if (source.length <= KEPT_SOURCE_CHARS) {
    documents.set(source, document);
    if (documents.size > KEPT_DOCUMENTS) documents.delete(documents.keys().next().value!);
  }
  return document;
}

/** Pairs (variable type → expected type) graph-node accepts beside the specification's. */
const LOOSE: Readonly<Record<string, readonly string[]>> = {
  BigInt: ['Int', 'String'],
  Bytes: ['String', 'ID'],
  ID: ['String', 'Bytes'],
  String: ['ID', 'Bytes'],
};

/** Same list depth, and the same or a loosely compatible named type. */
function looselyFits(variable: GraphQLType, location: GraphQLType): boolean {
  const v = getNullableType(variable);
  const l = getNullableType(location);
  if (isListType(v) || isListType(l)) return isListType(v) && isListType(l) && looselyFits(v.ofType, l.ofType);
  return v.name === l.name || (LOOSE[l.name]?.includes(v.name) ?? false);
}

/** VariablesInAllowedPositionRule as graph-node applies it: compatible scalars accepted, undeclared skipped. */
const LooseVariablePositionsRule: ValidationRule = (context) => ({
  OperationDefinition(operation) {
    const declared = new Map(operation.variableDefinitions?.map((d) => [d.variable.name.value, d]) ?? []);
    for (const { node, type } of context.getRecursiveVariableUsages(operation)) {
      const definition = declared.get(node.name.value);
      const variableType = definition && typeFromAST(context.getSchema(), definition.type);
      if (!variableType || !type) continue;
      if (isTypeSubTypeOf(context.getSchema(), variableType, type) || looselyFits(variableType, type)) continue;
      context.reportError(
        new GraphQLError(
          `Variable "$${node.name.value}" of type "${String(variableType)}" used in position expecting type "${String(type)}".`,
          {
            nodes: [definition, node],
          },
        ),
      );
    }
    return false;
  },
});

const RULES: readonly ValidationRule[] = [
  ...specifiedRules.filter(
    (rule) => rule !== NoUndefinedVariablesRule && rule !== NoUnusedVariablesRule && rule !== VariablesInAllowedPositionRule,
  ),
  LooseVariablePositionsRule,
];

/** Shape limits first (cheap, and they fail fast on abuse), then the standard rules. */
export function validateQuery(schema: GraphQLSchema, document: DocumentNode): readonly GraphQLError[] {
  if (validDocuments.get(document) === schema) return [];
  const shape = shapeErrors(document);
  const errors = shape.length > 0 ? shape : validate(schema, document, RULES);
  if (errors.length === 0) validDocuments.set(document, schema);
  return errors;
}

function shapeErrors(document: DocumentNode): GraphQLError[] {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  let aliases = 0;
  let selections = 0;
  let deepest = 0;
  const walk = (selectionSet: SelectionSetNode | undefined, depth: number, inFragments: ReadonlySet<string>): void => {
    for (const selection of selectionSet?.selections ?? []) {
      if (++selections > QUERY_LIMITS.maxSelections) return;
      if (selection.kind === Kind.FIELD) {
        if (selection.alias) aliases++;
        // Introspection reads the schema only; its depth is the schema's, not the data's.
        if (selection.name.value.startsWith('__')) continue;
        deepest = Math.max(deepest, depth + 1);
        walk(selection.selectionSet, depth + 1, inFragments);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        walk(selection.selectionSet, depth, inFragments);
      } else if (!inFragments.has(selection.name.value)) {
        // A fragment cycle is reported by validation; here it just stops the walk.
        walk(fragments.get(selection.name.value)?.selectionSet, depth, new Set([...inFragments, selection.name.value]));
      }
    }
  };
  for (const definition of document.definitions) {
    if (definition.kind === Kind.OPERATION_DEFINITION) walk(definition.selectionSet, 0, new Set());
  }
  const errors: GraphQLError[] = [];
  if (selections > QUERY_LIMITS.maxSelections) {
    errors.push(new GraphQLError(`The query has more than ${QUERY_LIMITS.maxSelections} selections with its fragments expanded`));
  }
  if (aliases > QUERY_LIMITS.maxAliases)
    errors.push(new GraphQLError(`The query uses ${aliases} aliases; at most ${QUERY_LIMITS.maxAliases} are allowed`));
  if (deepest > QUERY_LIMITS.maxDepth)
    errors.push(new GraphQLError(`The query nests fields ${deepest} deep; at most ${QUERY_LIMITS.maxDepth} are allowed`));
  return errors;
}

/**
 * The rows the operation may read, with its variables: a list field reads up to `first` (default
 * 100, at most 1000) rows for each row of its parent, a single entity one. The error when that is over budget, else null.
 */
export function rowBudgetError(args: ExecutionArgs): GraphQLError | null {
  const operation = args.document.definitions.find(
    (d) => d.kind === Kind.OPERATION_DEFINITION && (!args.operationName || d.name?.value === args.operationName),
  );
  if (!operation || operation.kind !== Kind.OPERATION_DEFINITION) return null;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of args.document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const variables = (args.variableValues ?? {}) as Record<string, unknown>;
  let rows = 0;
  let selections = 0;

  const firstOf = (value: ValueNode | undefined): number => {
    let first: unknown = LIMITS.defaultFirst;
    if (value?.kind === Kind.INT) first = Number(value.value);
    else if (value?.kind === Kind.VARIABLE && typeof variables[value.name.value] === 'number') first = variables[value.name.value];
    return Math.min(Math.max(Number(first) || 0, 0), LIMITS.maxFirst);
  };

  const walk = (type: GraphQLObjectType, selectionSet: SelectionSetNode | undefined, parents: number): void => {
    for (const selection of selectionSet?.selections ?? []) {
      // The shape check bounded the expanded selections; this bound only guards the walk itself.
      if (rows > QUERY_LIMITS.maxRows || ++selections > QUERY_LIMITS.maxSelections) return;
      if (selection.kind === Kind.INLINE_FRAGMENT) walk(type, selection.selectionSet, parents);
      else if (selection.kind === Kind.FRAGMENT_SPREAD) walk(type, fragments.get(selection.name.value)?.selectionSet, parents);
      else {
        const field = type.getFields()[selection.name.value];
        const target = field && getNamedType(field.type);
        if (!field || !isObjectType(target) || selection.name.value.startsWith('__')) continue;
        const many = isListType(getNullableType(field.type));
        const read = parents * (many ? firstOf(selection.arguments?.find((a) => a.name.value === 'first')?.value) : 1);
        rows += read;
        walk(target, selection.selectionSet, read);
      }
    }
  };
  walk(args.schema.getQueryType()!, operation.selectionSet, 1);
  if (rows <= QUERY_LIMITS.maxRows) return null;
  return new GraphQLError(
    `The query may read more than ${QUERY_LIMITS.maxRows} rows (each list reads \`first\` rows, default ${LIMITS.defaultFirst}, per row of its parent); ask for smaller pages`,
  );
}
