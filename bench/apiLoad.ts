/**
 * A closed-loop HTTP load generator for the API benchmark: `connections` keep-alive connections on
 * loopback, each sending its next request as soon as the previous answer is read in full, for a
 * fixed time. Latency is measured per request, from send to the last byte of the body.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export type LoadResult = {
  requests: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers other than 200 (the scenario is then not meaningful). */
  errors: number;
  /** Body size of the last answer. */
  bytes: number;
  /** Mean body size (answers of uncached scenarios vary: a day or seven, a page or a short one). */
  meanBytes: number;
};

export type LoadOptions = {
  origin: string;
  /** The path of the next request (varied for uncached scenarios). */
  nextPath: () => string;
  /** A JSON body makes the request a POST (GraphQL). */
  nextBody?: () => string;
  headers?: Record<string, string>;
  connections?: number;
  warmupMs?: number;
  durationMs?: number;
};

export const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
const round = (ms: number) => Math.round(ms * 100) / 100;

/** A measurement's raw samples, to merge several slices of one scenario. */
export type LoadSamples = { latencies: number[]; seconds: number; errors: number; bytes: number; totalBytes: number };

export function summarize(slices: LoadSamples[]): LoadResult {
  const latencies = slices.flatMap((s) => s.latencies).sort((a, b) => a - b);
  const seconds = slices.reduce((t, s) => t + s.seconds, 0);
  return {
    requests: latencies.length,
    perSecond: Math.round(latencies.length / seconds),
    p50Ms: round(quantile(latencies, 0.5)),
    p99Ms: round(quantile(latencies, 0.99)),
    errors: slices.reduce((n, s) => n + s.errors, 0),
    bytes: slices.at(-1)?.bytes ?? 0,
    meanBytes: latencies.length === 0 ? 0 : Math.round(slices.reduce((t, s) => t + s.totalBytes, 0) / latencies.length),
  };
}

export async function measureLoad(options: LoadOptions): Promise<LoadResult> {
  return summarize([await sampleLoad(options)]);
}

export async function sampleLoad(options: LoadOptions): Promise<LoadSamples> {
  const connections = options.connections ?? 16;
  const pool = new Pool(options.origin, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let errors = 0;
  let bytes = 0;
  let totalBytes = 0;
  let recording = false;
  const stopAt = performance.now() + (options.warmupMs ?? 500) + (options.durationMs ?? 4000);
  const recordFrom = performance.now() + (options.warmupMs ?? 500);

  async function worker(): Promise<void> {
    while (performance.now() < stopAt) {
      const started = performance.now();
      const body = options.nextBody?.();
      const res = await pool.request({
        origin: options.origin,
        path: options.nextPath(),
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? options.headers : { ...options.headers, 'content-type': 'application/json' },
        body,
      });
      const answer = await res.body.arrayBuffer();
      const ended = performance.now();
      if (!recording && started >= recordFrom) recording = true;
      if (!recording) continue;
      latencies.push(ended - started);
      bytes = answer.byteLength;
      totalBytes += bytes;
      if (res.statusCode !== 200) errors++;
    }
  }

  const began = performance.now();
  await Promise.all(Array.from({ length: connections }, worker));
  const seconds = (performance.now() - Math.max(began, recordFrom)) / 1000;
  await pool.close();
  return { latencies, seconds, errors, bytes, totalBytes };
}
