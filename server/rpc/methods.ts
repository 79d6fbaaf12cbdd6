import DataLoader from 'dataloader';
import { getAddress } from 'ethers';
import { z } from 'zod';
import { withinDeadline, type Queryable } from '../../shared/db/client.js';
import type { NetworkConfig } from '../../shared/config.js';
import * as bundleTransactions from '../../shared/db/tables/bundleTransactions.js';
import * as userOps from '../../shared/db/tables/userOps.js';
import { AppError } from '../../shared/errors.js';
import type { Ctx } from '../context.js';
import { defineEndpoint, type Endpoint } from '../endpoints/defineEndpoint.js';
import { hashInput } from '../endpoints/inputs.js';
import { callBundler } from './bundlerUpstream.js';
import { quantity, userOpByHashAnswer, userOpReceiptAnswer } from './userOpAnswers.js';

/**
 * The methods of /rpc/<network>, each an endpoint that runEndpoint admits (the key's `rpc` scope,
 * its rate limit and plan quotas: each item of a batch is one call), meters and, for op reads,
 * answers through the read-through cache. None is in the /v0 registry: JSON-RPC is their only
 * transport.
 */

const EMPTY = z.object({ network: z.string() });
const BY_HASH = z.object({ network: z.string(), hash: hashInput });
const FORWARDED = z.object({ network: z.string(), method: z.string(), params: z.unknown() });
const ANY = z.unknown();

/** The served network an input names (the route answered 404 for any other). */
function networkOf(ctx: Ctx, name: string): NetworkConfig {
  const network = ctx.config.networks.find((n) => n.name === name);
  if (!network) throw new AppError('NOT_FOUND', `No network "${name}" is served here`, { param: 'network' });
  return network;
}

type OpReads = {
  receipts: DataLoader<string, bundleTransactions.StoredReceipt | null>;
  ops: DataLoader<string, userOps.StoredUserOp | null>;
};

/** `${chainId}:${hash}` keys, grouped by chain, each chain's hashes read in one query. */
function batchByChain<T>(read: (chainId: number, hashes: string[]) => Promise<Map<string, T>>) {
  return async (keys: readonly string[]): Promise<Array<T | null>> => {
    const byChain = new Map<number, string[]>();
    for (const key of keys) {
      const [chainId, hash] = key.split(':') as [string, string];
      byChain.set(Number(chainId), [...(byChain.get(Number(chainId)) ?? []), hash]);
    }
    const found = new Map<string, T>();
    for (const [chainId, hashes] of byChain)
      for (const [hash, value] of await read(chainId, hashes)) found.set(`${chainId}:${hash}`, value);
    return keys.map((key) => found.get(key) ?? null);
  };
}

/**
 * Op reads by hash of the calls under way (a batch's items, other requests) within one turn of the
 * event loop go to the database together, one query per kind: a batch of 100 reads is one query,
 * not 100. Nothing is remembered past the turn (the response cache does that), per database (a
 * replica's reads stay on it). A batch's query is due by the deadline of the call that started it;
 * each call waits for it no longer than its own.
 */
const opReads = new WeakMap<Queryable, OpReads>();
function opReadsOf(db: Queryable): OpReads {
  let reads = opReads.get(db);
  if (!reads) {
    const options = { cache: false, batchScheduleFn: (run: () => void) => setImmediate(run) };
    reads = {
      receipts: new DataLoader(
        batchByChain((chainId, hashes) => bundleTransactions.listReceiptsOfUserOps(db, chainId, hashes)),
        options,
      ),
      ops: new DataLoader(
        batchByChain(async (chainId, hashes) => {
          const latest = new Map<string, userOps.StoredUserOp>();
          for (const op of await userOps.listStoredByHashes(db, chainId, hashes)) {
            const seen = latest.get(op.user_op_hash);
            if (!seen || BigInt(op.block_number) > BigInt(seen.block_number)) latest.set(op.user_op_hash, op);
          }
          return latest;
        }),
        options,
      ),
    };
    opReads.set(db, reads);
  }
  return reads;
}

/** An op answer's block, for the cache: kept long once final, like /v0's answers about an op. */
const finalWhen = (blockNumberOf: (answer: Record<string, unknown>) => unknown) => ({
  finalWhen: (answer: unknown, input: { network: string }) =>
    answer === null
      ? []
      : [{ network: input.network, blockNumber: Number(BigInt(String(blockNumberOf(answer as Record<string, unknown>)))) }],
});

const rpcMethod = <TInput extends z.ZodType>(
  summary: string,
  input: TInput,
  rest: Pick<Endpoint<TInput, typeof ANY>, 'handler' | 'cache'>,
): Endpoint => defineEndpoint({ summary, tag: 'ERC-4337 RPC', input, output: ANY, capability: 'rpc', ...rest });

/** The methods answered from the index, by name, and the kind of params each takes. */
export const INDEX_METHODS = {
  eth_getUserOperationReceipt: {
    params: 'hash',
    endpoint: rpcMethod('An op’s receipt', BY_HASH, {
      cache: finalWhen((a) => (a.receipt as { blockNumber: string }).blockNumber),
      async handler(ctx, input) {
        const receipt = await withinDeadline(opReadsOf(ctx.db).receipts.load(`${networkOf(ctx, input.network).chainId}:${input.hash}`));
        return receipt && userOpReceiptAnswer(input.hash, receipt);
      },
    }),
  },
  eth_getUserOperationByHash: {
    params: 'hash',
    endpoint: rpcMethod('An op by hash', BY_HASH, {
      cache: finalWhen((a) => a.blockNumber),
      async handler(ctx, input) {
        const op = await withinDeadline(opReadsOf(ctx.db).ops.load(`${networkOf(ctx, input.network).chainId}:${input.hash}`));
        return op ? userOpByHashAnswer(op) : null;
      },
    }),
  },
  eth_supportedEntryPoints: {
    params: 'none',
    endpoint: rpcMethod('The EntryPoints read on the network', EMPTY, {
      // The preferred first: the newest version.
      handler: (ctx, input) =>
        Promise.resolve(
          [...networkOf(ctx, input.network).entryPoints]
            .sort((a, b) => b.version.localeCompare(a.version, 'en', { numeric: true }))
            .map((e) => getAddress(e.address)),
        ),
    }),
  },
  eth_chainId: {
    params: 'none',
    endpoint: rpcMethod('The chain id', EMPTY, {
      handler: (ctx, input) => Promise.resolve(quantity(networkOf(ctx, input.network).chainId)),
    }),
  },
} as const satisfies Record<string, { params: 'hash' | 'none'; endpoint: Endpoint }>;

export type IndexMethod = keyof typeof INDEX_METHODS;

export const isIndexMethod = (method: string): method is IndexMethod => Object.hasOwn(INDEX_METHODS, method);

/** A method forwarded to the network's bundler (BUNDLER_URL_<NETWORK>): the bundler's outcome as it gave it. */
export const FORWARD = rpcMethod('A method the bundler answers', FORWARDED, {
  async handler(ctx, input) {
    const url = networkOf(ctx, input.network).bundlerUrl;
    if (!url) throw new AppError('NOT_FOUND', `The method ${input.method} is not available`, { param: 'method' });
    return callBundler(url, input.method, input.params);
  },
});
