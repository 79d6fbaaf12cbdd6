/**
 * The simulator's server: JSON-RPC over HTTP and WebSocket on one port, the head advancing at the
 * block time (or fixed, with --fast), a plan's batch and rate limits, newHeads subscriptions, and
 * counters of what was served. The WebSocket side is a minimal RFC 6455 server on node:http's
 * upgrade (text frames, ping/close; no fragmentation or extensions): the `ws` package is only a
 * transitive dependency here.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { wasmKeccakReady } from '../shared/keccak.js';
import type { EpVersion } from '../devnet/userop.js';
import { SimChainModel } from './chain.js';
import { RpcError, createMethods } from './methods.js';
import { BATCH_REFUSAL, findPlan, methodNotFound } from './plans.js';
import { findProfile, type Profile } from './profiles.js';
import { createTruth, type SimTruth } from './truth.js';

export type SimChainOptions = {
  /** A profile name (base, polygon, arbitrum, mainnet, … any network of the spec's map) or a Profile. */
  profile?: string | Profile;
  seed?: number;
  accounts?: number;
  /** First block served as the head (the profile's height by default). */
  fromBlock?: number;
  /** Blocks available at start: the head starts at fromBlock + blocks - 1 (default 1). */
  blocks?: number;
  /** With blockTimeMs 0: the fixed head (overrides blocks). */
  toBlock?: number;
  /** The head advances one block per blockTimeMs (the profile's by default); 0 keeps it fixed. */
  blockTimeMs?: number;
  plan?: string;
  port?: number;
  host?: string;
  logTimestamps?: boolean;
  cacheLogs?: number;
  /**
   * A round-trip time added to every HTTP request (ms): the answer leaves this long after the
   * request arrived, as a hosted node's answers reach a client across a network. 0 (default): none.
   * A request to the path `/rtt/MS` gets MS instead.
   */
  rttMs?: number;
  /**
   * Materialize the blocks available at start (and their JSON) before serving, kept in memory:
   * every transaction (`all`) or bundle transactions only (`bundles`). For benches, whose history
   * must be served faster than opscan reads it; start-up then takes the generator's time.
   */
  precompute?: 'all' | 'bundles';
};

export type SimChainStats = {
  requests: number;
  calls: number;
  batches: number;
  bytesOut: number;
  rateLimited: number;
  byMethod: Record<string, number>;
  blocksMaterialized: number;
  transactionsMaterialized: number;
};

export type SimChain = {
  url: string;
  wsUrl: string;
  chainId: number;
  profile: Profile;
  entryPoints: Record<EpVersion, string>;
  head(): number;
  /**
   * Stops the head where it is (a stalled chain): blocks keep being produced at the block time but
   * none is announced until `resume`.
   */
  stall(): void;
  /** Announces at once every block produced since `stall` (the stalled chain's jump); answers how many. */
  resume(): number;
  truth: SimTruth;
  model: SimChainModel;
  stats(): SimChainStats;
  close(): Promise<void>;
};

type JsonRequest = { jsonrpc?: string; id?: unknown; method?: unknown; params?: unknown };

const WS_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

export async function startSimChain(options: SimChainOptions = {}): Promise<SimChain> {
  await wasmKeccakReady;
  const profile = typeof options.profile === 'object' ? options.profile : findProfile(options.profile ?? 'base');
  const plan = findPlan(options.plan ?? 'unlimited');
  const model = new SimChainModel({
    profile,
    seed: options.seed,
    accounts: options.accounts,
    logTimestamps: options.logTimestamps,
    cacheLogs: options.cacheLogs,
  });
  const blockTimeMs = options.blockTimeMs ?? profile.blockTimeMs;
  const rttMs = options.rttMs ?? 0;
  if (!Number.isFinite(rttMs) || rttMs < 0) throw new Error(`rttMs: a non-negative number of milliseconds expected, got ${rttMs}`);
  const fromBlock = options.fromBlock ?? profile.defaultFromBlock;
  let head = blockTimeMs === 0 && options.toBlock !== undefined ? options.toBlock : fromBlock + Math.max(1, options.blocks ?? 1) - 1;
  if (options.precompute) model.precompute(fromBlock, head, options.precompute);
  const methods = createMethods(model, { current: () => head }, plan);

  const stats: SimChainStats = {
    requests: 0,
    calls: 0,
    batches: 0,
    bytesOut: 0,
    rateLimited: 0,
    byMethod: {},
    blocksMaterialized: 0,
    transactionsMaterialized: 0,
  };
  // Calls per second: a one-second window of counts.
  let windowStart = Date.now();
  let windowCalls = 0;
  const overRate = (calls: number): boolean => {
    if (plan.callsPerSecond === null) return false;
    const now = Date.now();
    if (now - windowStart >= 1000) [windowStart, windowCalls] = [now, 0];
    windowCalls += calls;
    return windowCalls > plan.callsPerSecond;
  };

  /** The text of answers that never change once given (see answerKey), oldest first. */
  const answered = new Map<string, JsonText>();

  const subscriptions = new Map<string, (message: string) => void>();
  let nextSubscription = 1;

  const answer = (req: JsonRequest, socket?: WsConnection): Record<string, unknown> => {
    const id = req?.id ?? null;
    if (!req || typeof req !== 'object' || typeof req.method !== 'string')
      return { jsonrpc: '2.0', id, error: { code: -32600, message: 'invalid request' } };
    const params = Array.isArray(req.params) ? req.params : req.params === undefined ? [] : null;
    if (!params) return { jsonrpc: '2.0', id, error: { code: -32602, message: 'params must be an array' } };
    stats.calls++;
    stats.byMethod[req.method] = (stats.byMethod[req.method] ?? 0) + 1;
    try {
      if (socket && req.method === 'eth_subscribe') {
        if (params[0] !== 'newHeads')
          throw new RpcError(-32602, `invalid argument 0: only "newHeads" subscriptions are served, not ${JSON.stringify(params[0])}`);
        const sub = `0x${(nextSubscription++).toString(16).padStart(32, '0')}`;
        subscriptions.set(sub, (m) => socket.send(m));
        socket.subscriptions.add(sub);
        return { jsonrpc: '2.0', id, result: sub };
      }
      if (socket && req.method === 'eth_unsubscribe') {
        const sub = String(params[0]);
        socket.subscriptions.delete(sub);
        return { jsonrpc: '2.0', id, result: subscriptions.delete(sub) };
      }
      const handler = methods.get(req.method);
      if (!handler) throw RpcError.of(methodNotFound(req.method));
      const key = answerKey(req.method, params);
      const known = key === null ? undefined : answered.get(key);
      if (known !== undefined) return { jsonrpc: '2.0', id, result: known };
      const result = handler(params) ?? null;
      if (key === null || result === null) return { jsonrpc: '2.0', id, result };
      const text = new JsonText(model.json(result));
      answered.set(key, text);
      if (answered.size > ANSWERS_KEPT) answered.delete(answered.keys().next().value!);
      return { jsonrpc: '2.0', id, result: text };
    } catch (err) {
      if (err instanceof RpcError)
        return {
          jsonrpc: '2.0',
          id,
          error: { code: err.code, message: err.message, ...(err.data !== undefined ? { data: err.data } : {}) },
        };
      return { jsonrpc: '2.0', id, error: { code: -32603, message: `internal error: ${(err as Error).message}` } };
    }
  };

  /** One answer's JSON, its result from the model's cached text (what a history serves twice is serialised once). */
  const encode = (response: Record<string, unknown>): string =>
    'result' in response
      ? `{"jsonrpc":"2.0","id":${JSON.stringify(response.id) ?? 'null'},"result":${response.result instanceof JsonText ? response.result.text : model.json(response.result)}}`
      : JSON.stringify(response);

  /** The body to send for one request body, and its HTTP status. */
  const respond = (body: string, socket?: WsConnection): { status: number; body: string } => {
    stats.requests++;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }) };
    }
    const list = Array.isArray(parsed) ? (parsed as JsonRequest[]) : null;
    if (list) stats.batches++;
    const calls = list ? list.length : 1;
    if (overRate(calls)) {
      stats.rateLimited++;
      return { status: 429, body: JSON.stringify(plan.rateLimitBody) };
    }
    if (!list) return { status: 200, body: encode(answer(parsed as JsonRequest, socket)) };
    if (plan.batchCap === 0) return { status: 200, body: JSON.stringify(BATCH_REFUSAL) };
    if (plan.batchCap !== null && list.length > plan.batchCap) {
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: plan.batchError(list.length, plan.batchCap) }) };
    }
    if (list.length === 0)
      return { status: 200, body: JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'empty batch' } }) };
    return { status: 200, body: `[${list.map((r) => encode(answer(r, socket))).join(',')}]` };
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { 'content-type': 'text/plain' }).end('JSON-RPC: POST only\n');
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const out = respond(Buffer.concat(chunks).toString('utf8'));
      stats.bytesOut += Buffer.byteLength(out.body);
      const send = (): void => void res.writeHead(out.status, { 'content-type': 'application/json' }).end(out.body);
      const rtt = rttOfPath(req.url) ?? rttMs;
      if (rtt > 0) setTimeout(send, rtt);
      else send();
    });
  });
  server.keepAliveTimeout = 60_000;

  const sockets = new Set<WsConnection>();
  server.on('upgrade', (req: IncomingMessage, socket: Duplex) => {
    const key = req.headers['sec-websocket-key'];
    if (typeof key !== 'string') return void socket.destroy();
    const accept = createHash('sha1')
      .update(key + WS_GUID)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    const conn = new WsConnection(socket, (text) => {
      const out = respond(text, conn);
      stats.bytesOut += Buffer.byteLength(out.body);
      conn.send(out.body);
    });
    sockets.add(conn);
    socket.on('close', () => {
      sockets.delete(conn);
      for (const sub of conn.subscriptions) subscriptions.delete(sub);
    });
    socket.on('error', () => socket.destroy());
  });

  const announce = (n: number): void => {
    if (subscriptions.size === 0) return;
    const header = model.header(n, false);
    for (const [sub, send] of subscriptions)
      send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: sub, result: header } }));
  };
  /** Blocks produced while stalled, not yet announced (null: not stalled). */
  let unannounced: number | null = null;
  const timer =
    blockTimeMs > 0
      ? setInterval(() => {
          if (unannounced !== null) return void unannounced++;
          head++;
          announce(head);
        }, blockTimeMs)
      : null;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host ?? '127.0.0.1';

  return {
    url: `http://${host}:${port}`,
    wsUrl: `ws://${host}:${port}`,
    chainId: model.chainId,
    profile,
    entryPoints: model.entryPoints,
    head: () => head,
    stall: () => void (unannounced ??= 0),
    resume: () => {
      const jump = unannounced ?? 0;
      unannounced = null;
      head += jump;
      if (jump > 0) announce(head);
      return jump;
    },
    truth: createTruth(model),
    model,
    stats: () => ({
      ...stats,
      byMethod: { ...stats.byMethod },
      blocksMaterialized: model.counters.skeletons,
      transactionsMaterialized: model.counters.transactions,
    }),
    close: async () => {
      if (timer) clearInterval(timer);
      for (const s of sockets) s.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An answer's JSON text, kept. */
class JsonText {
  constructor(readonly text: string) {}
}

/** Answers kept by answerKey: about 100 MB of a Base history's receipts and transactions. */
const ANSWERS_KEPT = 200_000;

/** Methods whose answer, once not null, is the same for the same parameters (the simulator has no reorgs). */
const FIXED_ANSWERS = new Set([
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getBlockReceipts',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
]);

/**
 * The key of an answer that cannot change: a block, its receipts, a transaction or a receipt asked
 * by hex number or hash (not by a tag such as latest, which moves with the head). Null otherwise.
 * A history's receipts are asked again by every run of a bench: served from their text, without
 * validating and locating the hash again.
 */
function answerKey(method: string, params: unknown[]): string | null {
  if (!FIXED_ANSWERS.has(method) || typeof params[0] !== 'string' || !params[0].startsWith('0x') || params.length > 2) return null;
  if (params.length === 2 && typeof params[1] !== 'boolean') return null;
  return `${method} ${params[0].toLowerCase()} ${params[1] === true}`;
}

/**
 * The round trip a request's path asks for (`/rtt/MS`), else null: one simulator, its history
 * precomputed once, serves clients at several distances (a bench's 0, 50 and 200 ms runs).
 */
function rttOfPath(path: string | undefined): number | null {
  const ms = /^\/rtt\/(\d{1,5})\/?$/.exec(path ?? '')?.[1];
  return ms === undefined ? null : Number(ms);
}

/** One WebSocket connection: unmasks client frames, answers pings, sends unmasked text frames. */
class WsConnection {
  readonly subscriptions = new Set<string>();
  private buffer = Buffer.alloc(0);

  constructor(
    private readonly socket: Duplex,
    onText: (text: string) => void,
  ) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      for (let frame = this.nextFrame(); frame; frame = this.nextFrame()) {
        if (frame.opcode === 0x1) onText(frame.payload.toString('utf8'));
        else if (frame.opcode === 0x9) this.write(0xa, frame.payload);
        else if (frame.opcode === 0x8) this.close();
      }
    });
  }

  private nextFrame(): { opcode: number; payload: Buffer } | null {
    const b = this.buffer;
    if (b.length < 2) return null;
    const opcode = b[0]! & 0x0f;
    const masked = (b[1]! & 0x80) !== 0;
    let length = b[1]! & 0x7f;
    let at = 2;
    if (length === 126) {
      if (b.length < 4) return null;
      length = b.readUInt16BE(2);
      at = 4;
    } else if (length === 127) {
      if (b.length < 10) return null;
      length = Number(b.readBigUInt64BE(2));
      at = 10;
    }
    const maskAt = at;
    if (masked) at += 4;
    if (b.length < at + length) return null;
    const payload = Buffer.from(b.subarray(at, at + length));
    if (masked) for (let i = 0; i < payload.length; i++) payload[i]! ^= b[maskAt + (i % 4)]!;
    this.buffer = b.subarray(at + length);
    return { opcode, payload };
  }

  private write(opcode: number, payload: Buffer): void {
    if (this.socket.destroyed) return;
    const n = payload.length;
    const head = n < 126 ? Buffer.from([0x80 | opcode, n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
    if (n >= 126 && n < 65536) {
      head[0] = 0x80 | opcode;
      head[1] = 126;
      head.writeUInt16BE(n, 2);
    } else if (n >= 65536) {
      head[0] = 0x80 | opcode;
      head[1] = 127;
      head.writeBigUInt64BE(BigInt(n), 2);
    }
    this.socket.write(Buffer.concat([head, payload]));
  }

  send(text: string): void {
    this.write(0x1, Buffer.from(text, 'utf8'));
  }

  close(): void {
    this.write(0x8, Buffer.alloc(0));
    this.socket.end();
  }
}
