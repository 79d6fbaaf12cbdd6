/**
 * Hosted-provider plans the simulator can impose, with the answers real providers give. Where a
 * message was checked against a public report it says so (`verified`); the rest follow the
 * providers' documentation.
 */

export type RpcErrorObject = { code: number; message: string };

export type Plan = {
  name: string;
  /** eth_getLogs: widest block range accepted (null: any). */
  logRangeCap: number | null;
  rangeError(from: number, to: number, cap: number): RpcErrorObject;
  /** eth_getLogs: most logs an answer may hold (null: any); `narrowRangeExempt`: ranges up to this many blocks are never capped (Alchemy's 2K rule). */
  logResultCap: number | null;
  narrowRangeExempt: number | null;
  /** `fitTo` is the last block of a range starting at `from` whose logs fit the cap. */
  resultError(from: number, to: number, fitTo: number, cap: number): RpcErrorObject;
  /** Largest JSON-RPC batch (null: any; 0: batches refused as a whole with `batchRefusal`). */
  batchCap: number | null;
  batchError(size: number, cap: number): RpcErrorObject;
  /** The debug namespace (debug_traceTransaction). */
  debug: boolean;
  /** Calls (batch members count one each) per second before HTTP 429 with `rateLimitBody`. */
  callsPerSecond: number | null;
  rateLimitBody: unknown;
  /** Which messages were checked against a real provider's answer. */
  verified: string[];
};

const hex = (n: number): string => `0x${n.toString(16)}`;

/** Geth's answer for a method it does not serve (also what providers answer without the debug API). */
export function methodNotFound(method: string): RpcErrorObject {
  return { code: -32601, message: `the method ${method} does not exist/is not available` };
}

/** What the public/gateway plan answers to any batch: one error object, not an array. */
export const BATCH_REFUSAL = { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } };

const unlimited: Plan = {
  name: 'unlimited',
  logRangeCap: null,
  rangeError: () => ({ code: -32005, message: 'unused' }),
  logResultCap: null,
  narrowRangeExempt: null,
  resultError: () => ({ code: -32005, message: 'unused' }),
  batchCap: null,
  batchError: () => ({ code: -32600, message: 'unused' }),
  debug: true,
  callsPerSecond: null,
  rateLimitBody: null,
  verified: [],
};

export const PLANS: Readonly<Record<string, Plan>> = {
  unlimited,
  infura: {
    ...unlimited,
    name: 'infura',
    logRangeCap: 10_000,
    rangeError: (from, to, cap) => ({ code: -32602, message: `range ${to - from + 1} exceeds limit of ${cap}` }),
    logResultCap: 10_000,
    resultError: (from, _to, fitTo, cap) => ({
      code: -32005,
      message: `query returned more than ${cap} results. Try with this block range [${hex(from)}, ${hex(fitTo)}].`,
    }),
    batchCap: 1000,
    batchError: (size, cap) => ({ code: -32005, message: `batch size ${size} exceeds the limit of ${cap}` }),
    debug: false,
    callsPerSecond: 500,
    rateLimitBody: {
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32005,
        message: 'daily request count exceeded, request rate limited',
        data: { rate: { allowed_rps: 500, backoff_seconds: 1, current_rps: 501 }, see: 'https://infura.io/dashboard' },
      },
    },
    verified: [
      'result cap: the -32005 "query returned more than 10000 results" form (aurora-relayer#327 and the issue)',
      'range cap: "range 1000000 exceeds limit of 10000" with -32602 (INFURA/infura#237)',
      'HTTP 429 body (gochain/web3#180)',
    ],
  },
  alchemy: {
    ...unlimited,
    name: 'alchemy',
    logResultCap: 10_000,
    narrowRangeExempt: 2000,
    resultError: (from, _to, fitTo) => ({
      code: -32602,
      message: `Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [${hex(from)}, ${hex(fitTo)}]`,
    }),
    batchCap: 1000,
    batchError: () => ({ code: -32600, message: 'Batch size too large' }),
    callsPerSecond: 330,
    rateLimitBody: {
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: 429,
        message:
          'Your app has exceeded its compute units per second capacity. If you have retries enabled, you can safely ignore this message. If not, check out https://docs.alchemy.com/reference/throughput',
      },
    },
    verified: ['the 2K-range / 10K-logs rule (bancorprotocol/webapp#523 quotes Alchemy support)'],
  },
  quicknode: {
    ...unlimited,
    name: 'quicknode',
    logRangeCap: 10_000,
    rangeError: () => ({ code: -32614, message: 'eth_getLogs is limited to a 10,000 range' }),
    callsPerSecond: 50,
    rateLimitBody: {
      jsonrpc: '2.0',
      id: 1,
      error: {
        code: -32007,
        message: '50/second request limit reached - reduce calls per second or upgrade your account at quicknode.com',
      },
    },
    verified: [],
  },
  public: {
    ...unlimited,
    name: 'public',
    logRangeCap: 1000,
    // Ankr's public endpoint (Ponder's getLogsRetryHelper knows it).
    rangeError: () => ({ code: -32600, message: 'block range is too wide' }),
    batchCap: 0,
    debug: false,
    callsPerSecond: 25,
    rateLimitBody: { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'rate limit exceeded' } },
    verified: [],
  },
  tiny: {
    ...unlimited,
    name: 'tiny',
    logRangeCap: 100,
    rangeError: (from, to, cap) => ({ code: -32602, message: `range ${to - from + 1} exceeds limit of ${cap}` }),
    logResultCap: 200,
    resultError: (from, _to, fitTo, cap) => ({
      code: -32005,
      message: `query returned more than ${cap} results. Try with this block range [${hex(from)}, ${hex(fitTo)}].`,
    }),
    batchCap: 10,
    batchError: (size, cap) => ({ code: -32005, message: `batch size ${size} exceeds the limit of ${cap}` }),
    verified: [],
  },
};

export function findPlan(name: string): Plan {
  const plan = PLANS[name];
  if (!plan) throw new Error(`unknown plan "${name}": one of ${Object.keys(PLANS).join(', ')}`);
  return plan;
}
