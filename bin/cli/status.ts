import type { IndexerConfig } from '../../shared/config.js';
import type { Db } from '../../shared/db/client.js';
import * as indexerState from '../../shared/db/tables/indexerState.js';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import { parse } from './args.js';

export const STATUS_USAGE = `usage: opscan status [--json]
  Per configured network: chain head, indexed block, lag, backfill; and webhook deliveries pending and failed.`;

export async function statusCommand(db: Db, config: Pick<IndexerConfig, 'networks'>, args: string[]): Promise<void> {
  const { values } = parse(args, { json: { type: 'boolean' } });
  const states = await indexerState.listByChainIds(
    db,
    config.networks.map((n) => n.chainId),
  );
  const networks = config.networks.map((n) => {
    const s = states.find((x) => x.chainId === n.chainId);
    const span = s ? s.headBlock - s.startBlock + 1 : 0;
    const done = s ? s.indexedBlock - s.startBlock + 1 : 0;
    return {
      network: n.name,
      chainId: n.chainId,
      headBlock: s?.headBlock ?? null,
      indexedBlock: s?.indexedBlock ?? null,
      lagBlocks: s ? Math.max(0, s.headBlock - s.indexedBlock) : null,
      backfill: !s
        ? 'not started'
        : s.backfillComplete
          ? 'complete'
          : `${span > 0 ? ((100 * Math.max(0, done)) / span).toFixed(1) : '0.0'}%`,
    };
  });
  const deliveries = await webhookDeliveries.countByStatus(db);
  const webhooks = { pending: deliveries.pending, due: deliveries.due, failed: deliveries.failed };
  if (values.json) {
    console.log(JSON.stringify({ networks, webhooks }, null, 2));
    return;
  }
  const rows = [
    ['network', 'head', 'indexed', 'lag', 'backfill'],
    ...networks.map((n) => [n.network, String(n.headBlock ?? '–'), String(n.indexedBlock ?? '–'), String(n.lagBlocks ?? '–'), n.backfill]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    console.log(
      r
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
  console.log(`webhook deliveries: ${webhooks.pending} pending (${webhooks.due} due now), ${webhooks.failed} failed`);
}
