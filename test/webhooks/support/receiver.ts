import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One request a test receiver got: `startedAt` when its body had arrived, `at` when it was answered. */
export type Received = { headers: IncomingHttpHeaders; body: string; startedAt: number; at: number; status: number };

/** How the receiver answers its n-th request (0-based): status, delay, extra headers. */
export type Behaviour = (n: number, body: string) => { status?: number; delayMs?: number; headers?: Record<string, string> };

export type Receiver = {
  url: string;
  received: Received[];
  /** Requests answered 2xx, by webhook-id. */
  delivered(): Map<string, Received>;
  waitFor(predicate: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
};

/** An HTTP server on 127.0.0.1 that records every webhook request (the tests' customer endpoint). */
export async function startReceiver(behaviour: Behaviour = () => ({})): Promise<Receiver> {
  const received: Received[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const startedAt = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      const plan = behaviour(n++, body);
      const status = plan.status ?? 200;
      const answer = () => {
        received.push({ headers: req.headers, body, startedAt, at: Date.now(), status });
        if (res.destroyed) return;
        res.writeHead(status, plan.headers ?? {});
        res.end('ok');
      };
      if (plan.delayMs) setTimeout(answer, plan.delayMs);
      else answer();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    delivered() {
      const map = new Map<string, Received>();
      for (const r of received) if (r.status >= 200 && r.status < 300) map.set(String(r.headers['webhook-id']), r);
      return map;
    },
    async waitFor(predicate, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate()) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met in ${timeoutMs} ms (${received.length} requests)`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A fresh receiver for each test of the calling `describe`, closed after it. */
export function useReceiver(behaviour?: Behaviour): { readonly current: Receiver } {
  let receiver: Receiver | undefined;
  beforeEach(async () => {
    receiver = await startReceiver(behaviour);
  });
  afterEach(() => receiver?.close());
  return {
    get current() {
      if (!receiver) throw new Error('useReceiver: the receiver exists only inside tests');
      return receiver;
    },
  };
}

/** Verifies a received request the way a customer would (throws if the signature is wrong). */
export function verifySignature(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  });
}
