import {
  GraphQLEnumType,
  GraphQLError,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfigMap,
  type GraphQLNullableType,
  type GraphQLScalarType,
} from 'graphql';
import * as moduleEvents from '../../shared/db/tables/moduleEvents.js';
import { MODULE_TYPES, moduleTypeOf } from '../../shared/models/index.js';
import { accountModules } from '../endpoints/accountModules.js';
import type { GraphqlContext } from './resolvers.js';
import { checkPage } from './where.js';

/**
 * ERC-7579 modules in GraphQL: `accountModules(address:)` and `modules(first:, skip:)`, the
 * answers of getAccountModules and getTopModules. Derived from an account's whole history, they
 * answer at the indexed head (no `block` argument).
 */

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export function moduleFields(scalars: {
  Bytes: GraphQLScalarType;
  BigInt: GraphQLScalarType;
}): GraphQLFieldConfigMap<unknown, GraphqlContext> {
  const nonNull = <T extends GraphQLNullableType>(type: T) => new GraphQLNonNull<T>(type);
  const list = <T extends GraphQLNullableType>(type: T) => nonNull(new GraphQLList(nonNull(type)));
  const ModuleType = new GraphQLEnumType({
    name: 'ModuleType',
    description: 'ERC-7579 module type ids 1–4 by name; any other id is `unknown` (its number is in moduleTypeId).',
    values: Object.fromEntries([...MODULE_TYPES, 'unknown'].map((name) => [name, {}])),
  });
  const ModuleInstall = new GraphQLObjectType({
    name: 'ModuleInstall',
    fields: {
      blockNumber: { type: nonNull(scalars.BigInt) },
      blockTime: { type: nonNull(scalars.BigInt) },
      transactionHash: { type: nonNull(scalars.Bytes) },
      userOpHash: { type: nonNull(scalars.Bytes) },
    },
  });
  const AccountModule = new GraphQLObjectType({
    name: 'AccountModule',
    description: 'A module installed now, with the install that put it there.',
    fields: {
      moduleTypeId: { type: nonNull(scalars.BigInt) },
      moduleType: { type: nonNull(ModuleType) },
      module: { type: nonNull(scalars.Bytes) },
      installedAt: { type: nonNull(ModuleInstall) },
    },
  });
  const ModuleHistoryEntry = new GraphQLObjectType({
    name: 'ModuleHistoryEntry',
    fields: {
      action: { type: nonNull(new GraphQLEnumType({ name: 'ModuleAction', values: { installed: {}, uninstalled: {} } })) },
      moduleTypeId: { type: nonNull(scalars.BigInt) },
      moduleType: { type: nonNull(ModuleType) },
      module: { type: nonNull(scalars.Bytes) },
      blockNumber: { type: nonNull(scalars.BigInt) },
      blockTime: { type: nonNull(scalars.BigInt) },
      transactionHash: { type: nonNull(scalars.Bytes) },
      userOpHash: { type: nonNull(scalars.Bytes) },
    },
  });
  const AccountModules = new GraphQLObjectType({
    name: 'AccountModules',
    fields: {
      address: { type: nonNull(scalars.Bytes) },
      network: { type: nonNull(GraphQLString) },
      modules: { type: list(AccountModule) },
      history: { type: list(ModuleHistoryEntry) },
    },
  });
  const ModuleSummary = new GraphQLObjectType({
    name: 'ModuleSummary',
    description: 'A module and the number of accounts that have it installed now.',
    fields: {
      module: { type: nonNull(scalars.Bytes) },
      moduleTypeIds: { type: list(scalars.BigInt) },
      moduleTypes: { type: list(ModuleType) },
      accountsLength: { type: nonNull(scalars.BigInt) },
    },
  });
  return {
    accountModules: {
      type: nonNull(AccountModules),
      description: "An account's ERC-7579 modules: installed now, and every install and uninstall of its ops (getAccountModules).",
      args: { address: { type: nonNull(scalars.Bytes) } },
      resolve: async (_parent, args: { address: string }, ctx) => {
        if (!ADDRESS.test(args.address)) throw new GraphQLError('The `address` argument must be a 20-byte address');
        const answer = await accountModules(ctx.db, ctx.network.chainId, args.address);
        return { address: args.address, network: ctx.network.name, ...answer };
      },
    },
    modules: {
      type: list(ModuleSummary),
      description: 'ERC-7579 modules ranked by the accounts that have them installed now, ties by address (getTopModules).',
      args: { first: { type: GraphQLInt, defaultValue: 100 }, skip: { type: GraphQLInt, defaultValue: 0 } },
      resolve: async (_parent, args: { first?: unknown; skip?: unknown }, ctx) => {
        const top = await moduleEvents.listTopByAccounts(ctx.db, ctx.network.chainId, checkPage(args));
        return top.map((m) => ({
          module: m.module,
          moduleTypeIds: m.moduleTypeIds,
          moduleTypes: m.moduleTypeIds.map(moduleTypeOf),
          accountsLength: m.accounts,
        }));
      },
    },
  };
}
