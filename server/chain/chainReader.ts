import { Contract, FetchRequest, JsonRpcProvider, Network } from 'ethers';
import type { NetworkConfig } from '../../shared/config.js';
import type { CallFrame } from '../../shared/db/tables/userOpTraces.js';
import { AppError } from '../../shared/errors.js';

/**
 * Live chain reads for the answers that are not indexed history (balances, transaction traces). All calls of one
 * answer go out as one JSON-RPC batch (ethers batches calls made in the same tick); the network's
 * RPC URLs are tried in order. A failure of every URL is a 502: the caller's request was fine.
 */

export type TokenMetadata = { name: string | null; symbol: string | null; decimals: number | null };

export type BalanceRead = {
  native: bigint;
  /** balanceOf(owner) per token; null when the token's call reverted (not an ERC-20/721). */
  tokens: Map<string, bigint | null>;
  /** Metadata read for the tokens asked for in `describe`. */
  metadata: Map<string, TokenMetadata>;
};

/** What to read: balanceOf(owner) of `tokens`, metadata of `describe`. */
export type BalanceQuery = { tokens: string[]; describe: string[] };

export type ChainReader = {
  readBalances(network: NetworkConfig, owner: string, want: BalanceQuery): Promise<BalanceRead>;
  /** The transaction's `callTracer` call tree (debug_traceTransaction). */
  traceTransaction(network: NetworkConfig, txHash: string): Promise<CallFrame>;
};

const RPC_TIMEOUT_MS = 5000;
/** Tracing re-executes the transaction: a large bundle takes a node longer than a plain read. */
const TRACE_TIMEOUT_MS = 30_000;
const TOKEN_ABI = [
  'function balanceOf(address) view returns (uint256)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function decimals() view returns (uint8)',
];

/** A call that reverted is an answer (null); anything else (transport, timeout) is a failure. */
async function orNullOnRevert<T>(call: Promise<T>): Promise<T | null> {
  try {
    return await call;
  } catch (err) {
    if ((err as { code?: string }).code === 'CALL_EXCEPTION' || (err as { code?: string }).code === 'BAD_DATA') return null;
    throw err;
  }
}

/**
 * Whether a JSON-RPC failure says the node does not serve the method (no debug namespace, or a
 * provider that refuses it), as opposed to failing to answer: ethers coalesces the former into
 * UNSUPPORTED_OPERATION for geth's wording only, so the usual codes and wordings are checked too.
 */
function isMethodUnavailable(err: unknown): boolean {
  const e = err as { code?: string; error?: { code?: number; message?: string } };
  if (e.code === 'UNSUPPORTED_OPERATION') return true;
  const rpc = e.error;
  return (
    rpc?.code === -32601 ||
    rpc?.code === -32004 ||
    /method .*(not (found|supported|available|exist))|not supported|unsupported method/i.test(rpc?.message ?? '')
  );
}

export function createChainReader(): ChainReader {
  const providers = new Map<string, JsonRpcProvider>();

  const providerFor = (url: string, chainId: number, timeoutMs = RPC_TIMEOUT_MS): JsonRpcProvider => {
    const key = `${timeoutMs} ${url}`;
    let provider = providers.get(key);
    if (!provider) {
      const request = new FetchRequest(url);
      request.timeout = timeoutMs;
      // A static network skips ethers' chain-id probing, which retries forever on a dead node.
      provider = new JsonRpcProvider(request, undefined, { staticNetwork: Network.from(chainId), batchStallTime: 2 });
      providers.set(key, provider);
    }
    return provider;
  };

  const requireRpc = (network: NetworkConfig, what: string): void => {
    if (network.rpcUrls.length === 0) {
      throw new AppError('BAD_GATEWAY', `No RPC URL is configured for ${network.name}: ${what} are unavailable.`);
    }
  };

  async function readWith(provider: JsonRpcProvider, owner: string, { tokens, describe }: BalanceQuery): Promise<BalanceRead> {
    const contract = (address: string) => new Contract(address, TOKEN_ABI, provider);
    // ethers types contract calls as any: say what each of TOKEN_ABI's functions returns.
    const call = <T>(c: Contract, method: string, ...args: unknown[]) => c.getFunction(method)(...args) as Promise<T>;
    const [native, balances, metadata] = await Promise.all([
      provider.getBalance(owner),
      Promise.all(tokens.map((t) => orNullOnRevert(call<bigint>(contract(t), 'balanceOf', owner)))),
      Promise.all(
        describe.map(async (t) => {
          const c = contract(t);
          const [name, symbol, decimals] = await Promise.all([
            orNullOnRevert(call<string>(c, 'name')),
            orNullOnRevert(call<string>(c, 'symbol')),
            orNullOnRevert(call<bigint>(c, 'decimals')),
          ]);
          return { name, symbol, decimals: decimals === null ? null : Number(decimals) };
        }),
      ),
    ]);
    return {
      native,
      tokens: new Map(tokens.map((t, i) => [t, balances[i] ?? null])),
      metadata: new Map(describe.map((t, i) => [t, metadata[i]!])),
    };
  }

  return {
    async readBalances(network, owner, want) {
      requireRpc(network, 'live balances');
      let lastError: unknown;
      for (const url of network.rpcUrls) {
        try {
          return await readWith(providerFor(url, network.chainId), owner, want);
        } catch (err) {
          lastError = err;
        }
      }
      throw new AppError('BAD_GATEWAY', `Reading balances from the ${network.name} node failed; try again.`, {
        cause: lastError,
      });
    },

    async traceTransaction(network, txHash) {
      requireRpc(network, 'transaction traces');
      let lastError: unknown;
      let unavailable = 0;
      for (const url of network.rpcUrls) {
        try {
          const frame: unknown = await providerFor(url, network.chainId, TRACE_TIMEOUT_MS).send('debug_traceTransaction', [
            txHash,
            { tracer: 'callTracer' },
          ]);
          if (frame && typeof frame === 'object') return frame;
          lastError = new Error(`the node answered no trace (${JSON.stringify(frame)})`);
        } catch (err) {
          if (isMethodUnavailable(err)) unavailable++;
          lastError = err;
        }
      }
      if (unavailable === network.rpcUrls.length) {
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          `The ${network.name} node does not serve debug_traceTransaction (no debug API): transaction traces are unavailable on this network.`,
          { cause: lastError },
        );
      }
      throw new AppError('BAD_GATEWAY', `Tracing the transaction on the ${network.name} node failed; try again.`, { cause: lastError });
    },
  };
}
