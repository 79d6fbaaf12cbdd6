import type { Db } from '../../shared/db/client.js';
import * as webhookDeliveries from '../../shared/db/tables/webhookDeliveries.js';
import * as webhooks from '../../shared/db/tables/webhooks.js';
import { CommandError, parse, UsageError } from './args.js';

export const WEBHOOKS_USAGE = `usage: opscan webhooks list [--json]            every webhook of every key: id, state, chain, filter, URL
       opscan webhooks disable WEBHOOK_ID      stop deliveries to it (pending ones are cancelled)
       opscan webhooks enable WEBHOOK_ID       deliver to it again (also one the dispatcher disabled)
       opscan webhooks replay DELIVERY_ID...   send deliveries again, same webhook-id and bytes`;

export async function webhooksCommand(db: Db, args: string[]): Promise<void> {
  const [command, ...rest] = args;
  const { values, positionals } = parse(rest, { json: { type: 'boolean' } });
  switch (command) {
    case 'list': {
      const all = await webhooks.listAll(db);
      if (values.json) {
        console.log(
          JSON.stringify(
            all.map((w) => ({ ...webhooks.toWebhookModel(w), keyId: w.apiKeyId })),
            null,
            2,
          ),
        );
        return;
      }
      if (all.length === 0) console.log('No webhooks.');
      for (const w of all) {
        const state = w.status === 'enabled' ? 'enabled' : `disabled (${w.disabledReason ?? 'unknown'})`;
        console.log(`${w.id}  ${state}  chain ${w.chainId}  ${w.filter} ${w.identifier}  ${w.url}`);
      }
      return;
    }
    case 'disable':
    case 'enable': {
      const id = positionals[0];
      if (!id) throw new UsageError(`webhooks ${command} needs a WEBHOOK_ID (see opscan webhooks list)`);
      const enabled = command === 'enable';
      const changed = await db.transaction(async (tx) => {
        const w = await webhooks.setEnabledByOperator(tx, id, enabled);
        if (w && !enabled) await webhookDeliveries.cancelPendingOfWebhook(tx, id);
        return w;
      });
      if (!changed) throw new CommandError(`No webhook ${id} (see opscan webhooks list)`);
      console.log(`${enabled ? 'Enabled' : 'Disabled'} ${changed.id} (${changed.url})`);
      return;
    }
    case 'replay': {
      if (positionals.length === 0)
        throw new UsageError('webhooks replay needs one or more DELIVERY_IDs (getWebhookDeliveries lists them)');
      const missing: string[] = [];
      for (const id of positionals) {
        const d = await webhookDeliveries.requeue(db, id);
        if (d) console.log(`Queued ${id} again`);
        else missing.push(id);
      }
      // A running dispatcher picks them up at once (else on its next poll).
      await webhookDeliveries.notifyDue(db);
      if (missing.length > 0) throw new CommandError(`No delivery ${missing.join(', ')}`);
      return;
    }
    default:
      throw new UsageError(command ? `unknown webhooks command "${command}"` : 'webhooks needs a command');
  }
}
