import { isDatabaseUnavailable, type Db } from '../shared/db/client.js';
import * as apiKeyUsage from '../shared/db/tables/apiKeyUsage.js';
import * as apiKeys from '../shared/db/tables/apiKeys.js';
import type { Logger } from '../shared/log.js';

/**
 * Usage metering: every call made with a known key is counted per (key, UTC hour, endpoint,
 * network, status class) in this process's memory, and the counts are added to api_key_usage in
 * one batch every USAGE_FLUSH_INTERVAL_MS (and on shutdown), with the keys' last_used_at. A call
 * costs one Map increment, never a database write. Each process adds its own counts (an upsert
 * that adds), so the stored sums are exact across processes once each has flushed.
 *
 * Hours older than USAGE_RETENTION_DAYS are deleted once an hour; every process may run the delete
 * (it is idempotent), so no process needs to be the one in charge of it.
 */
export type UsageMeter = {
  /** Counts one call; `network` is '' when the call named none, `status` the HTTP status answered. */
  record(apiKeyId: string, endpoint: string, network: string, status: number): void;
  /** Writes what is counted so far (the flush timer calls it; tests may too). */
  flush(): Promise<void>;
  /** Stops the timers and writes what is left. */
  close(): Promise<void>;
};

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/**
 * Counts by hour, key, endpoint, network and status class (index = the status's first digit).
 * Nested maps rather than one map keyed by a joined string: a call then allocates nothing, and the
 * strings it looks up (the key's id, the endpoint's name, the network's) have their hashes cached.
 */
type ByKey = Map<string, Map<string, Map<string, number[]>>>;
type Counts = Map<number, ByKey>;

function hourOf(counts: Counts, hour: number): ByKey {
  let byKey = counts.get(hour);
  if (!byKey) counts.set(hour, (byKey = new Map<string, Map<string, Map<string, number[]>>>()));
  return byKey;
}

/** The counts of one key, endpoint and network in an hour, by status class. */
function classesOf(byKey: ByKey, apiKeyId: string, endpoint: string, network: string): number[] {
  let byEndpoint = byKey.get(apiKeyId);
  if (!byEndpoint) byKey.set(apiKeyId, (byEndpoint = new Map<string, Map<string, number[]>>()));
  let byNetwork = byEndpoint.get(endpoint);
  if (!byNetwork) byEndpoint.set(endpoint, (byNetwork = new Map<string, number[]>()));
  let byClass = byNetwork.get(network);
  if (!byClass) byNetwork.set(network, (byClass = [0, 0, 0, 0, 0, 0]));
  return byClass;
}

function rowsOf(counts: Counts): apiKeyUsage.UsageCount[] {
  const rows: apiKeyUsage.UsageCount[] = [];
  for (const [hour, byKey] of counts)
    for (const [apiKeyId, byEndpoint] of byKey)
      for (const [endpoint, byNetwork] of byEndpoint)
        for (const [network, byClass] of byNetwork)
          byClass.forEach((requests, statusClass) => {
            if (requests > 0) rows.push({ apiKeyId, hour: new Date(hour), endpoint, network, statusClass, requests });
          });
  return rows;
}

export function createUsageMeter(options: {
  db: Db;
  log: Logger;
  enabled: boolean;
  flushIntervalMs: number;
  retentionDays: number;
}): UsageMeter {
  const { db, log } = options;
  let counts: Counts = new Map();
  let lastUsed = new Map<string, number>();
  let flushing: Promise<void> = Promise.resolve();
  let closed = false;

  async function write(batch: Counts, used: Map<string, number>): Promise<void> {
    const rows = rowsOf(batch);
    try {
      await apiKeyUsage.addCounts(db, rows);
      await apiKeys.touchLastUsed(
        db,
        [...used].map(([id, at]) => ({ id, at: new Date(at) })),
      );
    } catch (err) {
      if (!isDatabaseUnavailable(err)) {
        log.error({ err, rows: rows.length }, 'usage flush failed; these counts are dropped');
        return;
      }
      // The database is away (an outage, a failover): keep the counts for the next flush.
      for (const r of rows) classesOf(hourOf(counts, r.hour.getTime()), r.apiKeyId, r.endpoint, r.network)[r.statusClass]! += r.requests;
      for (const [id, at] of used) lastUsed.set(id, Math.max(at, lastUsed.get(id) ?? 0));
      log.warn({ err, rows: rows.length }, 'usage flush failed; retrying at the next flush');
    }
  }

  function flush(): Promise<void> {
    // One flush at a time: a slow one must not be overtaken (and doubled) by the next.
    flushing = flushing.then(() => {
      if (counts.size === 0 && lastUsed.size === 0) return;
      const batch = counts;
      const used = lastUsed;
      counts = new Map();
      lastUsed = new Map();
      return write(batch, used);
    });
    return flushing;
  }

  async function deleteExpired(): Promise<void> {
    try {
      const deleted = await apiKeyUsage.deleteBefore(db, new Date(Date.now() - options.retentionDays * DAY_MS));
      if (deleted > 0) log.debug({ deleted, retentionDays: options.retentionDays }, 'deleted expired usage hours');
    } catch (err) {
      log.warn({ err }, 'usage retention delete failed; retrying in an hour');
    }
  }

  const timers = options.enabled
    ? [setInterval(() => void flush(), options.flushIntervalMs), setInterval(() => void deleteExpired(), HOUR_MS)]
    : [];
  for (const timer of timers) timer.unref();

  return {
    record(apiKeyId, endpoint, network, status) {
      if (!options.enabled || closed) return;
      const now = Date.now();
      classesOf(hourOf(counts, now - (now % HOUR_MS)), apiKeyId, endpoint, network)[Math.min(5, Math.floor(status / 100))]! += 1;
      lastUsed.set(apiKeyId, now);
    },
    flush,
    async close() {
      if (closed) return flushing;
      closed = true;
      for (const timer of timers) clearInterval(timer);
      await flush();
    },
  };
}
