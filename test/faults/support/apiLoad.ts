/**
 * API load during a fault: a few concurrent clients calling read endpoints of the web process in a
 * loop, each answer recorded with its status, whether the body is JSON, its Retry-After and when it
 * came, so the suite can tell a JSON 503 during a database outage from any other 5xx.
 */

export type Answer = {
  path: string;
  /** 0 when no HTTP answer came (connection refused or reset, or no answer within the timeout). */
  status: number;
  json: boolean;
  retryAfter: string | null;
  error: string | null;
  /** When the answer came (epoch ms), and how long it took. */
  at: number;
  ms: number;
};

export type ApiLoad = { readonly answers: Answer[]; stop(): Promise<Answer[]> };

const REQUEST_TIMEOUT_MS = 15_000;

/** One GET with the key: the answer and its parsed body (undefined if not JSON). Never throws. */
export async function callApi(baseUrl: string, key: string, path: string): Promise<{ answer: Answer; body: unknown }> {
  const started = Date.now();
  try {
    const res = await fetch(`${baseUrl}${path}`, { headers: { 'x-api-key': key }, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    const json = body !== undefined && /^application\/json/.test(res.headers.get('content-type') ?? '');
    const at = Date.now();
    return {
      answer: { path, status: res.status, json, retryAfter: res.headers.get('retry-after'), error: null, at, ms: at - started },
      body,
    };
  } catch (err) {
    const at = Date.now();
    return {
      answer: { path, status: 0, json: false, retryAfter: null, error: (err as Error).message, at, ms: at - started },
      body: undefined,
    };
  }
}

/**
 * `clients` loops over `paths` until stopped (`{n}` in a path is the request's number below 10 000, so that
 * path is a new request each time, never answered from the response cache), at most `maxRequests` in all (bounded even if nobody
 * stops it), each client pausing `pauseMs` between requests.
 */
export function startApiLoad(options: {
  baseUrl: string;
  key: string;
  paths: string[];
  clients?: number;
  pauseMs?: number;
  maxRequests?: number;
}): ApiLoad {
  const answers: Answer[] = [];
  const maxRequests = options.maxRequests ?? 20_000;
  let running = true;
  let sent = 0;
  const client = async (offset: number) => {
    for (let i = offset; running && sent < maxRequests; i++) {
      sent++;
      const path = options.paths[i % options.paths.length]!.replace('{n}', String(sent % 10_000));
      answers.push((await callApi(options.baseUrl, options.key, path)).answer);
      await new Promise((r) => setTimeout(r, options.pauseMs ?? 20));
    }
  };
  const clients = Array.from({ length: options.clients ?? 4 }, (_, i) => client(i));
  return {
    answers,
    async stop() {
      running = false;
      await Promise.all(clients);
      return answers;
    },
  };
}

/** Counts of answers by status (0: no answer), as `200×412 503×20`. */
export function statusSummary(answers: Answer[]): string {
  const counts = new Map<number, number>();
  for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([status, n]) => `${status}×${n}`)
    .join(' ');
}
