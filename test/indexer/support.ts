/**
 * Shared pieces of the indexer tests: a devnet network config, a quiet logger, and the stored
 * data read back in the ground truth's shapes (so a test compares with deep equality).
 */
import { indexerEnvSchema, loadConfig, type IndexerConfig } from '../../shared/config.js';
import type { Queryable } from '../../shared/db/client.js';
import { createLogger, type Logger } from '../../shared/log.js';

export function devnetConfig(rpcUrl: string, extra: Record<string, string> = {}): IndexerConfig {
  return loadConfig(indexerEnvSchema, {
    NETWORKS: 'devnet',
    RPC_URL_DEVNET: rpcUrl,
    START_BLOCK_DEVNET: '0',
    INDEXER_POLL_INTERVAL_MS: '1000',
    ...extra,
  });
}

export function quietLogger(): Logger {
  return createLogger({ level: process.env.TEST_LOG_LEVEL ?? 'silent', name: 'indexer-test' });
}

/** Polls `check` until it holds (or throws after `timeoutMs`). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 60_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function indexedBlock(db: Queryable, chainId: number): Promise<number> {
  const { rows } = await db.query<{ indexed_block: string }>('select indexed_block from indexer_state where chain_id = $1', [chainId]);
  return rows[0] ? Number(rows[0].indexed_block) : -1;
}
