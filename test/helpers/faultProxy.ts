/**
 * A flaky JSON-RPC endpoint for tests: an HTTP proxy on 127.0.0.1 in front of a real node that
 * fails a share of requests the ways public providers do — timeouts (the request hangs), slow but
 * correct answers, HTTP 429 and 5xx, a socket closed without an answer, malformed answers (cut-off
 * JSON, a batch missing an answer, an answer swapped for an internal error) and batch answers in
 * another order (legal, but easy to mishandle) — and can enforce provider limits (eth_getLogs block
 * range, batch size). A test can change the faults while it runs (`configure`): a provider's bad
 * minute, then a worse half minute, then health.
 * Bounded: it stops itself after `lifetimeMs`, and hung requests are dropped after `hangMs`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault =
  'timeout' | 'delay' | 'http429' | 'http5xx' | 'closedSocket' | 'truncated' | 'missingAnswer' | 'internalError' | 'shuffledBatch';

export type FaultProxyOptions = {
  upstream: string;
  /** Share of requests that get a fault (0..1). */
  faultRate: number;
  faults?: Fault[];
  /** eth_getLogs spanning more blocks is refused with a provider-style error. */
  maxLogRange?: number;
  /** Batches larger than this are refused (-32014). */
  maxBatchSize?: number;
  /** Batches are refused as a whole with one error object (public and gateway endpoints). */
  noBatches?: boolean;
  /** eth_getLogs answers holding more logs are refused the way Infura does (-32005, with a range to try). */
  maxLogResults?: number;
  /** More calls than this in the last second (a batch's members count one each) get HTTP 429, as hosted plans answer. */
  callsPerSecond?: number;
  /** Methods answered with "method not found" (a node without the debug namespace). */
  unsupportedMethods?: string[];
  /** The first receipt of each transaction comes from "another node" (a different blockHash). */
  staleReceiptsOnce?: boolean;
  /** Every eth_getLogs answer gets an extra EntryPoint log with a zero transaction hash (zkSync-style). */
  zeroHashLogs?: boolean;
  hangMs?: number;
  /** Longest extra wait of a `delay` fault (each waits a random share of it). */
  maxDelayMs?: number;
  lifetimeMs?: number;
  /** Each fault's own share of requests (0..1, summing to at most 1), in place of `faultRate` spread evenly over `faults`. */
  faultShares?: Partial<Record<Fault, number>>;
  /**
   * Share of requests whose eth_getBlockByNumber and eth_getBlockReceipts calls for the newest
   * blocks (the head this proxy last answered, and the one before) answer `null`, as a load
   * balancer's replica behind the head does.
   */
  nullRecentBlocks?: number;
  /** Every request waits a random share of this before it is answered. */
  latencyMs?: number;
  /** Deterministic fault choice. */
  seed?: number;
};

/** What `configure` may change while the proxy runs. */
export type FaultProfile = Pick<FaultProxyOptions, 'faultRate' | 'faults' | 'faultShares' | 'nullRecentBlocks' | 'latencyMs'>;

/**
 * A provider's bad minute and after (test/indexer/providerBadMinute.test.ts, the reliability
 * matrix): 25 % HTTP 5xx, 10 % 429 without Retry-After, 10 % JSON-RPC errors, up to 400 ms of added
 * latency and 5 % `null` for a block just announced; then every answer cut short or its socket
 * dropped; then healthy.
 */
export const BAD_MINUTE: Record<'bad' | 'worse' | 'healed', FaultProfile> = {
  bad: { faultRate: 0, faultShares: { http5xx: 0.25, http429: 0.1, internalError: 0.1 }, nullRecentBlocks: 0.05, latencyMs: 400 },
  worse: { faultRate: 0, faultShares: { truncated: 0.5, closedSocket: 0.5 }, nullRecentBlocks: 0, latencyMs: 0 },
  healed: { faultRate: 0, nullRecentBlocks: 0, latencyMs: 0 },
};

type Counter =
  | Fault
  | 'requests'
  | 'rangeRefusals'
  | 'resultRefusals'
  | 'batchRefusals'
  | 'rateLimited'
  | 'unsupported'
  | 'staleReceipts'
  | 'zeroHashLogs'
  | 'nullBlocks';
/** `methods`: calls received, by JSON-RPC method (a batch's members count one each). */
export type FaultProxy = {
  url: string;
  stats: Record<Counter, number>;
  methods: Record<string, number>;
  /** Replaces the faults from the next request on (the fields given; `faultShares` cleared unless given). */
  configure(profile: FaultProfile): void;
  stop(): Promise<void>;
};

type RpcMessage = { id?: unknown; method?: string; params?: unknown[] };
type RpcAnswer = { id?: unknown; result?: unknown; error?: unknown };

export const ALL_FAULTS: Fault[] = [
  'timeout',
  'delay',
  'http429',
  'http5xx',
  'closedSocket',
  'truncated',
  'missingAnswer',
  'internalError',
  'shuffledBatch',
];

function rangeSpan(msg: RpcMessage): number {
  const filter = (msg.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
  if (!filter.fromBlock || !filter.toBlock || !filter.toBlock.startsWith('0x')) return 0;
  return Number.parseInt(filter.toBlock, 16) - Number.parseInt(filter.fromBlock, 16) + 1;
}

export async function startFaultProxy(initial: FaultProxyOptions): Promise<FaultProxy> {
  const options = { ...initial };
  const hangMs = options.hangMs ?? 2_000;
  const maxDelayMs = options.maxDelayMs ?? 1_000;
  let state = options.seed ?? 1;
  const random = (): number => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
  const stats: FaultProxy['stats'] = {
    requests: 0,
    rangeRefusals: 0,
    resultRefusals: 0,
    batchRefusals: 0,
    rateLimited: 0,
    unsupported: 0,
    staleReceipts: 0,
    zeroHashLogs: 0,
    nullBlocks: 0,
    timeout: 0,
    delay: 0,
    http429: 0,
    http5xx: 0,
    closedSocket: 0,
    truncated: 0,
    missingAnswer: 0,
    internalError: 0,
    shuffledBatch: 0,
  };
  const methods: Record<string, number> = {};
  const staleServed = new Set<string>();
  /** When the calls of the last second were answered (callsPerSecond). */
  const callTimes: number[] = [];
  const hung = new Set<ServerResponse>();
  /** The newest head answered to eth_blockNumber (nullRecentBlocks). */
  let announced = -1;

  /** The fault of this request, or null. */
  const drawFault = (): Fault | null => {
    if (options.faultShares) {
      let r = random();
      for (const [fault, share] of Object.entries(options.faultShares) as Array<[Fault, number]>) {
        if (r < share) return fault;
        r -= share;
      }
      return null;
    }
    if (random() >= options.faultRate) return null;
    const faults = options.faults ?? ALL_FAULTS;
    return faults[Math.floor(random() * faults.length)]!;
  };

  /** Answers eth_blockNumber's head; blanks the newest blocks' answers when this request draws a replica behind. */
  const recentBlocks = (text: string, list: RpcMessage[]): string => {
    const heads = list.filter((m) => m.method === 'eth_blockNumber');
    const behind = options.nullRecentBlocks !== undefined && random() < options.nullRecentBlocks;
    if (heads.length === 0 && !behind) return text;
    const parsed = JSON.parse(text) as RpcAnswer | RpcAnswer[];
    let blanked = false;
    const answers = (Array.isArray(parsed) ? parsed : [parsed]).map((a) => {
      const m = list.find((x) => x.id === a.id);
      if (m?.method === 'eth_blockNumber' && typeof a.result === 'string') announced = Math.max(announced, Number(a.result));
      const tag = m?.params?.[0];
      const recent =
        (m?.method === 'eth_getBlockByNumber' || m?.method === 'eth_getBlockReceipts') &&
        typeof tag === 'string' &&
        tag.startsWith('0x') &&
        Number(tag) >= announced - 1;
      if (!behind || !recent) return a;
      blanked = true;
      return { ...a, result: null };
    });
    if (blanked) stats.nullBlocks++;
    return JSON.stringify(Array.isArray(parsed) ? answers : answers[0]);
  };

  /** The node's answer, with the configured data faults applied to individual answers. */
  const forward = async (body: string): Promise<string> => {
    const messages = JSON.parse(body) as RpcMessage | RpcMessage[];
    const list = Array.isArray(messages) ? messages : [messages];
    const unsupported = list.filter((m) => options.unsupportedMethods?.includes(m.method ?? ''));
    const res = await fetch(options.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const text = recentBlocks(await res.text(), list);
    if (unsupported.length === 0 && !options.staleReceiptsOnce && !options.zeroHashLogs && !options.maxLogResults) return text;
    const parsed = JSON.parse(text) as RpcAnswer | RpcAnswer[];
    const answers = (Array.isArray(parsed) ? parsed : [parsed]).map((a) => {
      const m = list.find((x) => x.id === a.id);
      if (m && unsupported.includes(m)) {
        stats.unsupported++;
        return { jsonrpc: '2.0', id: a.id, error: { code: -32601, message: `the method ${m.method} does not exist/is not available` } };
      }
      if (m?.method === 'eth_getTransactionReceipt' && options.staleReceiptsOnce && a.result) {
        const receipt = a.result as { transactionHash: string; blockHash: string };
        if (!staleServed.has(receipt.transactionHash)) {
          staleServed.add(receipt.transactionHash);
          stats.staleReceipts++;
          return { ...a, result: { ...receipt, blockHash: `0x${'5'.repeat(64)}` } };
        }
      }
      if (m?.method === 'eth_getLogs' && options.maxLogResults && Array.isArray(a.result) && a.result.length > options.maxLogResults) {
        stats.resultRefusals++;
        // Infura names a range that would fit: here the first block alone (it may still not fit).
        const { fromBlock } = (m.params?.[0] ?? {}) as { fromBlock?: string };
        const message = `query returned more than ${options.maxLogResults} results. Try with this block range [${fromBlock}, ${fromBlock}].`;
        return { jsonrpc: '2.0', id: a.id, error: { code: -32005, message } };
      }
      if (m?.method === 'eth_getLogs' && options.zeroHashLogs && Array.isArray(a.result) && a.result.length > 0) {
        const first = a.result[0] as Record<string, unknown>;
        stats.zeroHashLogs++;
        return { ...a, result: [...a.result, { ...first, transactionHash: `0x${'0'.repeat(64)}`, logIndex: '0x7fff' }] };
      }
      return a;
    });
    return JSON.stringify(Array.isArray(parsed) ? answers : answers[0]);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString();
    stats.requests++;
    const parsed = JSON.parse(body) as RpcMessage | RpcMessage[];
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    for (const m of messages) methods[m.method ?? ''] = (methods[m.method ?? ''] ?? 0) + 1;
    const send = (status: number, text: string): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(text);
    };

    if (options.maxBatchSize && Array.isArray(parsed) && parsed.length > options.maxBatchSize) {
      stats.batchRefusals++;
      return send(
        200,
        JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32014, message: `batch size too large: max ${options.maxBatchSize}` } }),
      );
    }
    if (options.callsPerSecond) {
      const now = Date.now();
      while (callTimes.length > 0 && callTimes[0]! <= now - 1000) callTimes.shift();
      if (callTimes.length + messages.length > options.callsPerSecond) {
        stats.rateLimited++;
        return send(429, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: 429, message: 'Too Many Requests' } }));
      }
      for (const _ of messages) callTimes.push(now);
    }
    if (options.noBatches && Array.isArray(parsed)) {
      stats.batchRefusals++;
      return send(200, JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } }));
    }
    const tooWide = options.maxLogRange
      ? messages.find((m) => m.method === 'eth_getLogs' && rangeSpan(m) > options.maxLogRange!)
      : undefined;
    if (tooWide) {
      stats.rangeRefusals++;
      const error = { code: -32005, message: `query exceeds max block range ${options.maxLogRange}` };
      const answers = messages.map((m) => ({ jsonrpc: '2.0', id: m.id, error }));
      return send(200, JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
    }

    if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * options.latencyMs!)));
    const fault = drawFault();
    if (fault === null) return send(200, await forward(body));
    stats[fault]++;
    switch (fault) {
      case 'timeout':
        hung.add(res);
        setTimeout(() => {
          hung.delete(res);
          res.destroy();
        }, hangMs);
        return;
      case 'delay': {
        const answer = await forward(body);
        await new Promise((resolve) => setTimeout(resolve, Math.floor(random() * maxDelayMs)));
        return send(200, answer);
      }
      case 'http429':
        return send(429, '{"error":"rate limited"}');
      case 'closedSocket':
        req.socket.destroy();
        return;
      case 'http5xx':
        return send(random() < 0.5 ? 502 : 503, '<html>bad gateway</html>');
      case 'truncated': {
        const text = await forward(body);
        return send(200, text.slice(0, Math.floor(text.length / 2)));
      }
      case 'missingAnswer': {
        const answer = JSON.parse(await forward(body)) as unknown;
        if (Array.isArray(answer) && answer.length > 1) return send(200, JSON.stringify(answer.slice(1)));
        return send(200, JSON.stringify({ jsonrpc: '2.0', id: 999_999_999, result: null }));
      }
      case 'shuffledBatch': {
        const answer = JSON.parse(await forward(body)) as unknown;
        if (!Array.isArray(answer)) return send(200, JSON.stringify(answer));
        // Fisher–Yates with the proxy's seeded random: JSON-RPC lets a batch answer in any order.
        for (let i = answer.length - 1; i > 0; i--) {
          const j = Math.floor(random() * (i + 1));
          [answer[i], answer[j]] = [answer[j], answer[i]];
        }
        return send(200, JSON.stringify(answer));
      }
      case 'internalError': {
        const answers = messages.map((m) => ({ jsonrpc: '2.0', id: m.id, error: { code: -32603, message: 'internal error' } }));
        return send(200, JSON.stringify(Array.isArray(parsed) ? answers : answers[0]));
      }
    }
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= new Promise<void>((resolve) => {
      clearTimeout(lifetime);
      for (const res of hung) res.destroy();
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return stopping;
  };
  const lifetime = setTimeout(() => void stop(), options.lifetimeMs ?? 300_000);
  lifetime.unref();
  const configure = (profile: FaultProfile): void => {
    options.faultShares = undefined;
    Object.assign(options, profile);
  };
  return { url: `http://127.0.0.1:${port}`, stats, methods, configure, stop };
}
