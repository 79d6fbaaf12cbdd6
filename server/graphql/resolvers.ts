import DataLoader from 'dataloader';
import { Kind, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import type { Path } from 'graphql/jsutils/Path.js';
import type { NetworkConfig } from '../../shared/config.js';
import type { Queryable } from '../../shared/db/client.js';
import type { PgType } from '../../shared/db/entityView.js';
import type { OpFailure } from '../../shared/models/opFailure.js';
import { assertAnswerableAt, indexedHead, locateBlock, type BlockHeight, type QueryBlock } from './blocks.js';
import { ENTITIES, type Entity } from './entities.js';
import { FAILURE_NEEDS } from './opFailure.js';
import { listRows, listRowsPerParent, type ListArgs, type Row } from './rows.js';

/** What every resolver of one request shares: the network it asked for and the request's batch loaders. */
export type GraphqlContext = {
  db: Queryable;
  network: NetworkConfig;
  /** One loader per relation field, arguments and selection: parents of one level share a statement. */
  loaders: Map<string, DataLoader<string, Row[]>>;
  /** The failures of the failed ops this request asked about (opFailure.ts), loaded together. */
  failures?: DataLoader<string, OpFailure | null>;
  /** The indexed head, read on first need (blocks.ts). */
  head?: ReturnType<typeof indexedHead>;
  /** The block each top-level field was asked at, by its response key: the fields nested in it read at the same block. */
  blocks: Map<string, QueryBlock>;
};

export const newGraphqlContext = (db: Queryable, network: NetworkConfig): GraphqlContext => ({
  db,
  network,
  loaders: new Map(),
  blocks: new Map(),
});

/** The block the top-level field a resolved field is nested in was asked at (null: the latest). */
function blockOfRoot(ctx: GraphqlContext, path: Path): QueryBlock | null {
  let root = path;
  while (root.prev) root = root.prev;
  return ctx.blocks.get(String(root.key)) ?? null;
}

/** A top-level field's block argument, located and kept for its nested fields; its entity refused if it cannot answer there. */
async function blockOfField(entity: Entity, height: BlockHeight | null | undefined, ctx: GraphqlContext, info: GraphQLResolveInfo) {
  const block = await locateBlock(ctx, height);
  assertAnswerableAt(entity, block);
  if (block) ctx.blocks.set(String(info.path.key), block);
  return block;
}

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
  if (entity.name === 'UserOp' && names.has('failure')) for (const field of FAILURE_NEEDS) names.add(field);
  return new Set([...names].filter((name) => name in entity.view.fields).sort());
}

type BlockArgs = { block?: BlockHeight | null };

export const resolveCollection =
  (entity: Entity) =>
  async (_root: unknown, args: ListArgs & BlockArgs, ctx: GraphqlContext, info: GraphQLResolveInfo): Promise<Row[]> => {
    const block = await blockOfField(entity, args.block, ctx, info);
    return listRows(ctx.db, ctx.network.chainId, { view: entity.view, args, fields: requestedFields(info, entity), block: block?.number });
  };

export const resolveSingle =
  (entity: Entity) =>
  async (_root: unknown, args: { id: string } & BlockArgs, ctx: GraphqlContext, info: GraphQLResolveInfo): Promise<Row | null> => {
    const block = await blockOfField(entity, args.block, ctx, info);
    const query = {
      view: entity.view,
      args: { where: { id: args.id }, first: 1 },
      fields: requestedFields(info, entity),
      block: block?.number,
    };
    const rows = await listRows(ctx.db, ctx.network.chainId, query);
    return rows[0] ?? null;
  };

/** A relation field: queued with its siblings of the same level, loaded in one statement. */
export function resolveRelation(parentEntity: Entity, name: string) {
  const relation = parentEntity.relations[name]!;
  const child = ENTITIES[relation.entity];
  // Keys are sent as the child column's type (a bytea column takes the parent's 0x-hex as bytea).
  const childFields = Object.values(child.view.fields);
  const keyTypes: PgType[] = relation.on.map(
    ([parentField, childColumn]) => childFields.find((f) => f.sql === childColumn)?.pg ?? parentEntity.view.fields[parentField]!.pg,
  );
  return async (parent: Row, args: ListArgs, ctx: GraphqlContext, info: GraphQLResolveInfo): Promise<Row[] | Row | null> => {
    const key = relation.on.map(([parentField]) => parent[parentField]);
    if (key.some((v) => v === null || v === undefined)) return relation.list ? [] : null;
    const block = blockOfRoot(ctx, info.path);
    assertAnswerableAt(child, block);
    const fields = requestedFields(info, child);
    const loaderKey = `${parentEntity.name}.${name}@${block?.number ?? 'latest'}:${JSON.stringify(args)}:${[...fields].join(',')}`;
    let loader = ctx.loaders.get(loaderKey);
    if (!loader) {
      loader = new DataLoader<string, Row[]>((keys) =>
        listRowsPerParent(
          ctx.db,
          ctx.network.chainId,
          { view: child.view, args, fields, block: block?.number },
          { relation, keys: keys.map((k) => JSON.parse(k) as unknown[]), keyTypes },
        ),
      );
      ctx.loaders.set(loaderKey, loader);
    }
    const rows = await loader.load(JSON.stringify(key));
    return relation.list ? rows : (rows[0] ?? null);
  };
}

/**
 * `_meta`: the indexed head of the network, as graph-node describes its latest indexed block, or the
 * block its `block` argument names (a block asked by number is answered without its header, as graph-node does).
 */
export async function resolveMeta(_root: unknown, args: BlockArgs, ctx: GraphqlContext) {
  const block = (await locateBlock(ctx, args.block)) ?? (await indexedHead(ctx));
  return {
    block: { number: block.number, hash: block.hash, parentHash: block.parentHash, timestamp: block.timestamp },
    deployment: `opscan/${ctx.network.name}`,
    hasIndexingErrors: false,
  };
}
