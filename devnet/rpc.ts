/**
 * A bare JSON-RPC client for the devnet's hot path. ethers' provider adds polling, caching and
 * request coalescing we do not want while pushing thousands of raw transactions and mining by
 * hand; this sends exactly the calls we ask for, one HTTP request per call or per batch.
 */

export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(`${method}: ${message} (code ${code})`);
  }
}

type RpcResponse = { id: number; result?: unknown; error?: { code: number; message: string; data?: unknown } };

export class Rpc {
  private nextId = 1;

  constructor(readonly url: string) {}

  async call<T = unknown>(method: string, params: unknown[] = []): Promise<T> {
    const [result] = await this.batch<T>([[method, params]]);
    return result as T;
  }

  /** Sends several calls in one JSON-RPC batch; results come back in call order. Throws on the first error. */
  async batch<T = unknown>(calls: Array<[method: string, params: unknown[]]>): Promise<T[]> {
    if (calls.length === 0) return [];
    const firstId = this.nextId;
    this.nextId += calls.length;
    const body = calls.map(([method, params], i) => ({ jsonrpc: '2.0', id: firstId + i, method, params }));
    const res = await fetch(this.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body.length === 1 ? body[0] : body),
    });
    if (!res.ok) throw new Error(`JSON-RPC HTTP ${res.status} from ${this.url}: ${await res.text()}`);
    const json = (await res.json()) as RpcResponse | RpcResponse[];
    const responses = Array.isArray(json) ? json : [json];
    const byId = new Map(responses.map((r) => [r.id, r]));
    return calls.map(([method], i) => {
      const r = byId.get(firstId + i);
      if (!r) throw new RpcError(method, -1, 'no response in batch');
      if (r.error) throw new RpcError(method, r.error.code, r.error.message, r.error.data);
      return r.result as T;
    });
  }
}
