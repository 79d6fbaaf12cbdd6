/**
 * Follows a node's head as it moves: `eth_subscribe newHeads` over a WebSocket, calling `onHead`
 * with each announced block number. A dropped or refused socket is opened again with back-off
 * (doubling from `minRetryMs` to `maxRetryMs`, reset once a subscription is confirmed); after each
 * new subscription `onHead` is called once with null, since heads announced while the socket was
 * down are lost. The caller keeps polling meanwhile: this only makes the head known sooner.
 *
 * A socket can also die without closing (a NAT or load balancer forgetting the connection): every
 * `keepAliveMs` the node is asked for its chain id over the socket, and a socket that has said
 * nothing since the previous ask is abandoned and opened again, so a dead one is noticed within
 * two intervals.
 *
 * undici's WebSocket (a dependency already; Node 20 has no global WebSocket without a flag).
 */
import { WebSocket } from 'undici';
import type { Logger } from '../../shared/log.js';
import { urlHost } from './jsonRpcHttp.js';

export type HeadSubscription = {
  /** Whether a subscription is confirmed and its socket open now. */
  readonly live: boolean;
  stop(): Promise<void>;
};

/** What a newHeads announcement tells of the new head. */
export type AnnouncedHead = { number: number; hash: string; parentHash: string };

export type HeadSubscriptionOptions = {
  url: string;
  log: Logger;
  /** A head announced, or null after (re)subscribing: look at the head now. */
  onHead: (head: AnnouncedHead | null) => void;
  minRetryMs?: number;
  maxRetryMs?: number;
  /** An opening socket not subscribed within this long is dropped and opened again. */
  subscribeTimeoutMs?: number;
  keepAliveMs?: number;
};

const SUBSCRIBE_ID = 1;
const KEEP_ALIVE_ID = 2;

export function subscribeNewHeads(options: HeadSubscriptionOptions): HeadSubscription {
  const { log, onHead } = options;
  const minRetryMs = options.minRetryMs ?? 250;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const subscribeTimeoutMs = options.subscribeTimeoutMs ?? 10_000;
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  const host = urlHost(options.url);
  let stopped = false;
  let socket: WebSocket | null = null;
  let subscriptionId: string | null = null;
  let retryMs = minRetryMs;
  let retryTimer: NodeJS.Timeout | undefined;
  /** One log line per outage, not one per attempt. */
  let outageLogged = false;
  let closed: Promise<void> = Promise.resolve();
  /** Whether the socket said anything since the last keep-alive ask. */
  let heard = true;

  const scheduleReconnect = (reason: string): void => {
    if (stopped) return;
    if (!outageLogged) {
      log.warn({ ws: host, reason, retryMs }, 'newHeads subscription down; polling meanwhile, reconnecting with back-off');
      outageLogged = true;
    } else log.debug({ ws: host, reason, retryMs }, 'newHeads subscription still down');
    retryTimer = setTimeout(connect, retryMs);
    retryMs = Math.min(maxRetryMs, retryMs * 2);
  };

  const onMessage = (data: unknown): void => {
    heard = true;
    if (typeof data !== 'string') return;
    let msg: {
      id?: unknown;
      result?: unknown;
      error?: { message?: unknown };
      method?: unknown;
      params?: { subscription?: unknown; result?: { number?: unknown; hash?: unknown; parentHash?: unknown } };
    };
    try {
      msg = JSON.parse(data) as typeof msg;
    } catch {
      return;
    }
    if (msg.id === SUBSCRIBE_ID) {
      if (typeof msg.result === 'string') {
        subscriptionId = msg.result;
        retryMs = minRetryMs;
        log.info({ ws: host }, outageLogged ? 'newHeads subscription restored' : 'following the head by newHeads subscription');
        outageLogged = false;
        onHead(null);
      } else {
        // A node without subscriptions: try again later (it may be a load balancer's bad member).
        socket?.close(1000, 'eth_subscribe refused');
        log.debug({ ws: host, error: msg.error?.message }, 'eth_subscribe newHeads refused');
      }
      return;
    }
    if (msg.method !== 'eth_subscription' || msg.params?.subscription !== subscriptionId) return;
    const { number, hash, parentHash } = msg.params?.result ?? {};
    const isHash = (h: unknown): h is string => typeof h === 'string' && /^0x[0-9a-f]{64}$/i.test(h);
    if (typeof number === 'string' && /^0x[0-9a-f]+$/i.test(number) && isHash(hash) && isHash(parentHash))
      onHead({ number: Number(number), hash: hash.toLowerCase(), parentHash: parentHash.toLowerCase() });
  };

  /** Gives up on `ws` (closed, or silent): the next socket is opened with back-off. */
  const abandon = (ws: WebSocket, reason: string): void => {
    if (socket !== ws) return;
    socket = null;
    subscriptionId = null;
    scheduleReconnect(reason);
  };

  function connect(): void {
    if (stopped) return;
    let ws: WebSocket;
    try {
      ws = new WebSocket(options.url);
    } catch (err) {
      scheduleReconnect((err as Error).message);
      return;
    }
    socket = ws;
    subscriptionId = null;
    heard = true;
    const subscribeTimer = setTimeout(() => {
      if (subscriptionId === null) ws.close(1000, 'no subscription');
    }, subscribeTimeoutMs);
    const keepAlive = setInterval(() => {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (!heard) {
        // Closing may never complete on a dead connection: the next socket does not wait for it.
        abandon(ws, `silent for ${keepAliveMs} ms`);
        ws.close(1000, 'silent');
        clearInterval(keepAlive);
        return;
      }
      heard = false;
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: KEEP_ALIVE_ID, method: 'eth_chainId', params: [] }));
    }, keepAliveMs);
    closed = new Promise<void>((resolve) => {
      ws.addEventListener('close', (event) => {
        clearTimeout(subscribeTimer);
        clearInterval(keepAlive);
        resolve();
        abandon(ws, `closed (${event.code}${event.reason ? ` ${event.reason}` : ''})`);
      });
    });
    ws.addEventListener('open', () => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: SUBSCRIBE_ID, method: 'eth_subscribe', params: ['newHeads'] }));
    });
    ws.addEventListener('message', (event) => {
      if (socket === ws) onMessage(event.data);
    });
    // 'close' follows every 'error'; the reconnect is scheduled there.
    ws.addEventListener('error', () => undefined);
  }

  connect();

  return {
    get live() {
      return subscriptionId !== null && socket?.readyState === WebSocket.OPEN;
    },
    async stop() {
      stopped = true;
      clearTimeout(retryTimer);
      socket?.close(1000, 'stopping');
      await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 2_000).unref())]);
    },
  };
}
