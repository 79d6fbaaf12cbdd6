import { GraphQLError, GraphQLInputObjectType, GraphQLInt, type GraphQLScalarType } from 'graphql';
import * as blocks from '../../shared/db/tables/blocks.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import type { Entity } from './entities.js';
import type { GraphqlContext } from './resolvers.js';

/**
 * Time-travel queries as graph-node answers them: a top-level field's `block: {hash}`, `{number}` or
 * `{number_gte}` names the block its answer is as of, and every field nested in it reads at that block.
 * Rows written once (ops, bundles, deposits, transfers: their view has a `block` column) are read as
 * of any indexed block; entities of running totals (accounts, paymasters, daily metrics…) exist at
 * the indexed head only, and are refused at an earlier block. Refusals carry graph-node's messages,
 * which clients parse (`has only indexed up to block number (\d+)`).
 */

export type BlockHeight = { hash?: string | null; number?: number | null; number_gte?: number | null };

/** The block a field is answered at: its number, and its header when known (asked by hash, or the head). */
export type QueryBlock = {
  number: number;
  hash: string | null;
  timestamp: number | null;
  parentHash: string | null;
  /** Whether it is the indexed head (what running totals are kept at). */
  atHead: boolean;
};

export const blockHeightType = (bytes: GraphQLScalarType) =>
  new GraphQLInputObjectType({
    name: 'Block_height',
    description:
      'The block to answer at: `hash`, else `number`, else the indexed head if it is at least `number_gte`. Running totals (accounts, paymasters, factories, bundlers, daily metrics, global counters) are answered at the indexed head only.',
    fields: { hash: { type: bytes }, number: { type: GraphQLInt }, number_gte: { type: GraphQLInt } },
  });

type Head = NonNullable<Awaited<ReturnType<typeof indexerState.findIndexedHead>>>;

/**
 * The indexed head, read once per request: every block argument and `_meta` of one query compare
 * with the same head. Before the first batch, block 0 with no header (as `_meta` answers it).
 */
export function indexedHead(ctx: GraphqlContext): Promise<Head> {
  ctx.head ??= indexerState
    .findIndexedHead(ctx.db, ctx.network.chainId)
    .then((head) => head ?? { number: 0, hash: null, parentHash: null, timestamp: null });
  return ctx.head;
}

const deploymentOf = (ctx: GraphqlContext) => `opscan/${ctx.network.name}`;

const notYetIndexed = (ctx: GraphqlContext, argument: string, head: number, asked: number) =>
  new GraphQLError(
    `Failed to decode \`${argument}\` value: \`subgraph ${deploymentOf(ctx)} has only indexed up to block number ${head} and data for block number ${asked} is therefore not yet available\``,
  );

/** The block a `block` argument names (null: none given, the latest), or graph-node's refusal. */
export async function locateBlock(ctx: GraphqlContext, height: BlockHeight | null | undefined): Promise<QueryBlock | null> {
  if (height === null || height === undefined) return null;
  const head = await indexedHead(ctx);
  const atHead: QueryBlock = { ...head, atHead: true };
  if (height.hash !== null && height.hash !== undefined) {
    const header = head.hash === height.hash ? { ...head } : await blocks.findByHash(ctx.db, ctx.network.chainId, height.hash);
    if (!header) throw new GraphQLError('Failed to decode `block.hash` value: `no block with that hash found`');
    if (header.number > head.number) throw notYetIndexed(ctx, 'block.number', head.number, header.number);
    return { ...header, atHead: header.number === head.number };
  }
  if (height.number !== null && height.number !== undefined) {
    if (height.number > head.number) throw notYetIndexed(ctx, 'block.number', head.number, height.number);
    // As graph-node: a block asked by number is answered without its header.
    return height.number === head.number
      ? { ...atHead, hash: null, timestamp: null, parentHash: null }
      : { number: height.number, hash: null, timestamp: null, parentHash: null, atHead: false };
  }
  if (height.number_gte !== null && height.number_gte !== undefined) {
    if (height.number_gte > head.number) throw notYetIndexed(ctx, 'block.number_gte', head.number, height.number_gte);
    return atHead;
  }
  throw new GraphQLError('Invalid `block` argument: give one of `hash`, `number` or `number_gte`');
}

/** Refuses an entity of running totals at a block before the indexed head (they are kept at the head only). */
export function assertAnswerableAt(entity: Entity, block: QueryBlock | null): void {
  if (!block || block.atHead || entity.view.block) return;
  throw new GraphQLError(
    `${entity.name} cannot be answered at block ${block.number}: it holds running totals, kept at the indexed head only. ` +
      'Time-travel queries (`block: {number}` or `{hash}` before the head) are supported for immutable entities only: ' +
      'UserOp, Bundle, Deposit and their nested ops, bundles and transfers. Ask without `block`, or with `block: {number_gte: …}`.',
  );
}
