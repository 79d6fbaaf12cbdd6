import DataLoader from 'dataloader';
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import type { NetworkConfig } from '../../shared/config.js';
import type { Queryable } from '../../shared/db/client.js';
import type { PgType } from '../../shared/db/entityView.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import { ENTITIES, type Entity } from './entities.js';
import { listRows, listRowsPerParent, type ListArgs, type Row } from './rows.js';

/** What every resolver of one request shares: the network it asked for and the request's batch loaders. */
export type GraphqlContext = {
  db: Queryable;
  network: NetworkConfig;
  /** One loader per relation field, arguments and selection: parents of one level share a statement. */
  loaders: Map<string, DataLoader<string, Row[]>>;
};

export const newGraphqlContext = (db: Queryable, network: NetworkConfig): GraphqlContext => ({ db, network, loaders: new Map() });

/**
 * The view fields a field's selection asks for (through fragments too), plus the fields its
 * relations join on, so that each statement reads only what the answer needs.
 */
function requestedFields(info: GraphQLResolveInfo, entity: Entity): Set<string> {
  const names = new Set<string>();
  const seenFragments = new Set<string>();
  const visit = (selectionSet: SelectionSetNode | undefined) => {
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.FIELD) names.add(selection.name.value);
      else if (selection.kind === Kind.INLINE_FRAGMENT) visit(selection.selectionSet);
      else if (!seenFragments.has(selection.name.value)) {
        seenFragments.add(selection.name.value);
        visit(info.fragments[selection.name.value]?.selectionSet);
      }
    }
  };
  for (const node of info.fieldNodes) visit(node.selectionSet);
  for (const [name, relation] of Object.entries(entity.relations)) {
    if (names.has(name)) for (const [parentField] of relation.on) names.add(parentField);
  }
  return new Set([...names].filter((name) => name in entity.view.fields).sort());
}

export const resolveCollection =
  (entity: Entity) =>
  (_root: unknown, args: ListArgs, ctx: GraphqlContext, info: GraphQLResolveInfo): Promise<Row[]> =>
    listRows(ctx.db, ctx.network.chainId, { view: entity.view, args, fields: requestedFields(info, entity) });

export const resolveSingle =
  (entity: Entity) =>
  async (_root: unknown, args: { id: string }, ctx: GraphqlContext, info: GraphQLResolveInfo): Promise<Row | null> => {
    const query = { view: entity.view, args: { where: { id: args.id }, first: 1 }, fields: requestedFields(info, entity) };
    const rows = await listRows(ctx.db, ctx.network.chainId, query);
    return rows[0] ?? null;
  };

/** A relation field: queued with its siblings of the same level, loaded in one statement. */
export function resolveRelation(parentEntity: Entity, name: string) {
  const relation = parentEntity.relations[name]!;
  const child = ENTITIES[relation.entity];
  const keyTypes: PgType[] = relation.on.map(([parentField]) => parentEntity.view.fields[parentField]!.pg);
  return async (parent: Row, args: ListArgs, ctx: GraphqlContext, info: GraphQLResolveInfo): Promise<Row[] | Row | null> => {
    const key = relation.on.map(([parentField]) => parent[parentField]);
    if (key.some((v) => v === null || v === undefined)) return relation.list ? [] : null;
    const fields = requestedFields(info, child);
    const loaderKey = `${parentEntity.name}.${name}:${JSON.stringify(args)}:${[...fields].join(',')}`;
    let loader = ctx.loaders.get(loaderKey);
    if (!loader) {
      loader = new DataLoader<string, Row[]>((keys) =>
        listRowsPerParent(
          ctx.db,
          ctx.network.chainId,
          { view: child.view, args, fields },
          { relation, keys: keys.map((k) => JSON.parse(k) as unknown[]), keyTypes },
        ),
      );
      ctx.loaders.set(loaderKey, loader);
    }
    const rows = await loader.load(JSON.stringify(key));
    return relation.list ? rows : (rows[0] ?? null);
  };
}

/** `_meta`: the indexed head of the network, as graph-node describes its latest indexed block. */
export async function resolveMeta(_root: unknown, _args: unknown, ctx: GraphqlContext) {
  const head = await indexerState.findIndexedHead(ctx.db, ctx.network.chainId);
  return {
    block: head ?? { number: 0, hash: null, parentHash: null, timestamp: null },
    deployment: `opscan/${ctx.network.name}`,
    hasIndexingErrors: false,
  };
}
