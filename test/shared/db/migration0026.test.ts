/**
 * Migration 0026 on a database written before it: the values of the tables the previous
 * release's fixture holds no rows of (webhook deliveries) or that no answer reads back (known
 * addresses, block headers, the cursor's hash, outbox events) come back as the same 0x-hex from the
 * bytea columns, nulls and empty lists kept, and the table functions find them.
 */
import { expect } from 'chai';
import { createDb } from '../../../shared/db/client.js';
import { listMigrations, migrate } from '../../../shared/db/migrate.js';
import * as blocks from '../../../shared/db/tables/blocks.js';
import * as indexerState from '../../../shared/db/tables/indexerState.js';
import * as knownAddresses from '../../../shared/db/tables/knownAddresses.js';
import * as webhookDeliveries from '../../../shared/db/tables/webhookDeliveries.js';
import * as webhookOutboxCursors from '../../../shared/db/tables/webhookOutboxCursors.js';

const CHAIN = 31337;
const A = '0x' + 'a'.repeat(40);
const B = '0x' + '0b'.repeat(20);
const hash = (n: number) => '0x' + n.toString(16).padStart(64, '0');

describe('migration 0026 on a populated database', function () {
  this.timeout(120_000);

  it('rewrites the hex text of the small tables as bytes that read back as before', async () => {
    const db = await createDb({});
    try {
      const all = listMigrations();
      await migrate(
        db,
        all.filter((m) => m.name < '0026'),
      );
      // Rows as the release before 0026 stored them (0x-hex text).
      await db.query(`select opscan_ensure_chain_partitions($1)`, [CHAIN]);
      await db.query(
        `insert into indexer_state (chain_id, network, start_block, indexed_block, indexed_block_hash) values ($1, 'devnet', 0, 9, $2)`,
        [CHAIN, hash(9)],
      );
      await db.query(`insert into blocks (chain_id, number, hash, parent_hash, timestamp) values ($1, 9, $2, $3, 90)`, [
        CHAIN,
        hash(9),
        hash(8),
      ]);
      await db.query(`insert into known_addresses (chain_id, address, first_block) values ($1, $2, 1), ($1, $3, 2)`, [CHAIN, A, B]);
      await db.query(
        `insert into outbox_events (chain_id, type, block_number, user_op_hash, payload)
         values ($1, 'user_operation', 9, $2, '{}'), ($1, 'reorg', 9, null, '{}')`,
        [CHAIN, hash(1)],
      );
      await db.query(`insert into api_keys (prefix, key_hash, name) values ('ops_test', 'x', 'test')`);
      await db.query(
        `insert into webhooks (id, api_key_id, api_name, url, filter, identifier, address, chain_id, secret_ciphertext)
         select 'wh_1', id, 'test', 'http://127.0.0.1/', 'ADDRESS', $1, $1, $2, 'secret' from api_keys`,
        [A, CHAIN],
      );
      await db.query(
        `insert into webhook_deliveries (id, webhook_id, event_key, event_type, chain_id, user_op_hash, body, status, attempts)
         values ('d1', 'wh_1', 'outbox:1', 'user_operation', $1, $2, '{}', 'delivered', 1),
                ('d2', 'wh_1', 'outbox:2', 'reorg', $1, null, '{}', 'delivered', 1)`,
        [CHAIN, hash(1)],
      );

      await migrate(db, all);

      expect(await indexerState.findCursor(db, CHAIN)).to.include({ indexedBlockHash: hash(9) });
      expect(await blocks.findByHash(db, CHAIN, hash(9).toUpperCase().replace('0X', '0x'))).to.deep.equal({
        number: 9,
        hash: hash(9),
        parentHash: hash(8),
        timestamp: 90,
      });
      expect(await blocks.findByHash(db, CHAIN, 'not hex')).to.equal(null);
      expect(await knownAddresses.listPage(db, CHAIN, null, 10)).to.deep.include({ count: 2, last: A });
      expect([...(await knownAddresses.findKnown(db, CHAIN, [A, B, hash(5).slice(0, 42)]))].sort()).to.deep.equal([B, A]);
      const events = await webhookOutboxCursors.listEventsAfter(db, CHAIN, 0, 10);
      expect(events.map((e) => e.userOpHash)).to.deep.equal([hash(1), null]);
      expect(await webhookDeliveries.retractOps(db, CHAIN, [hash(1)])).to.deep.equal([{ webhookId: 'wh_1', userOpHashes: [hash(1)] }]);
    } finally {
      await db.close();
    }
  });
});
