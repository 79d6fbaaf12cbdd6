import DataLoader from 'dataloader';
import {
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfig,
  type GraphQLScalarType,
} from 'graphql';
import * as userOpTraces from '../../shared/db/tables/userOpTraces.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import type { OpFailure } from '../../shared/models/opFailure.js';
import type { DecodedArgument } from '../../shared/models/trace.js';
import { diagnoseFailure } from '../opFailure.js';
import type { GraphqlContext } from './resolvers.js';
import type { Row } from './rows.js';

/**
 * UserOp's `failure`: why the op failed, as getUserOp answers it (server/opFailure.ts), over the
 * op's stored trace only (GraphQL never asks the node: an op not traced yet has no frame). The
 * failed ops of one request load in one statement per table.
 */

/** The view fields `failure` reads from its parent row. */
export const FAILURE_NEEDS = ['userOpHash', 'success'];

const string = new GraphQLNonNull(GraphQLString);

/** An argument's value as text: strings as they are, anything else (numbers, lists, structs) as JSON. */
const Argument = new GraphQLObjectType<DecodedArgument>({
  name: 'OpFailureArgument',
  fields: {
    name: { type: string },
    type: { type: string },
    value: { type: string, resolve: (a) => (typeof a.value === 'string' ? a.value : JSON.stringify(a.value)) },
  },
});

export function failureField(bytes: GraphQLScalarType): GraphQLFieldConfig<Row, GraphqlContext> {
  const args = { type: new GraphQLList(new GraphQLNonNull(Argument)) };
  const Frame = new GraphQLObjectType({
    name: 'OpFailureFrame',
    description: 'The call that raised the error, from the stored trace.',
    fields: {
      to: { type: new GraphQLNonNull(bytes) },
      selector: { type: bytes },
      method: { type: GraphQLString },
      depth: { type: new GraphQLNonNull(GraphQLInt) },
      error: { type: GraphQLString },
    },
  });
  const Wrapper = new GraphQLObjectType({
    name: 'OpFailureWrapper',
    fields: { name: { type: string }, selector: { type: new GraphQLNonNull(bytes) }, args: { type: new GraphQLNonNull(args.type) } },
  });
  const Failure = new GraphQLObjectType<OpFailure>({
    name: 'OpFailure',
    description: 'Why a user operation failed: its stage, the revert data decoded, the call that raised it.',
    fields: {
      stage: { type: string },
      kind: { type: string },
      name: { type: GraphQLString },
      message: { type: GraphQLString },
      selector: { type: bytes },
      args,
      data: { type: new GraphQLNonNull(bytes) },
      wrappers: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(Wrapper))) },
      frame: { type: Frame },
    },
  });
  return {
    type: Failure,
    description: 'Why the op failed (null when it succeeded).',
    resolve: (parent, _args, ctx) => {
      if (parent.success !== false) return null;
      ctx.failures ??= new DataLoader<string, OpFailure | null>(async (hashes) => {
        const [stored, traces] = await Promise.all([
          userOps.listFailures(ctx.db, ctx.network.chainId, [...hashes]),
          userOpTraces.findMany(ctx.db, ctx.network.chainId, [...hashes]),
        ]);
        return hashes.map((h) => {
          const failure = stored.get(h);
          return failure ? diagnoseFailure(failure, traces.get(h) ?? null) : null;
        });
      });
      return ctx.failures.load(String(parent.userOpHash));
    },
  };
}
