/**
 * persistBatch on constructed batches: the cursor and parent-hash guards, two networks side by
 * side in one database (edge case 32), and a custom EntryPoint address resolved to its version
 * (edge case 31).
 */
import { expect } from 'chai';
import { decodeRange } from '../../../indexer/decode/decodeRange.js';
import type { BlockHeader, RawBundleTx } from '../../../indexer/decode/chainTypes.js';
import { CursorMovedError, ParentMismatchError, persistBatch } from '../../../indexer/persist/persistBatch.js';
import { bytea } from '../../../shared/db/client.js';
import * as indexerState from '../../../shared/db/tables/indexerState.js';
import { useTestDb } from '../../helpers/db.js';
import { addr, ENTRY_POINTS, EP07, handleOpsV06, handleOpsV07, hash, TxBuilder } from '../decode/builders.js';

const CUSTOM_EP = addr(0xc0570);

function header(number: number, parent: string): BlockHeader {
  return { number, hash: hash(0xb10c00 + number), parentHash: parent, timestamp: 1_700_000_000 + number };
}

function batchAt(chainId: number, block: number, parent: string, txs: RawBundleTx[]) {
  return batchWith(ENTRY_POINTS, { chainId, block, parent, txs });
}

function batchWith(
  entryPoints: typeof ENTRY_POINTS,
  { chainId, block, parent, txs }: { chainId: number; block: number; parent: string; txs: RawBundleTx[] },
) {
  return decodeRange(
    {
      chainId,
      fromBlock: block,
      toBlock: block,
      headers: [header(block, parent)],
      entryPointLogs: txs.flatMap((t) => t.receipt.logs),
      bundleTxs: txs,
      blockTimes: new Map([[block, 1_700_000_000]]),
      tracesSupported: true,
    },
    entryPoints,
    'off',
  );
}

function bundleTx(block: number, n: number): RawBundleTx {
  const b = new TxBuilder(hash(0x7000 + block), block).beforeExecution(EP07);
  for (let i = 0; i < n; i++) b.opEvent(EP07, { hash: hash(block * 100 + i), sender: addr(0x500 + i), nonce: BigInt(block) });
  return b.raw(
    handleOpsV07(
      Array.from({ length: n }, (_, i) => ({ sender: addr(0x500 + i), nonce: BigInt(block) })),
      addr(0xbe),
    ),
  );
}

const options = { headBlock: 200, keepHeadersFrom: 0, backfillComplete: false };

describe('persist/persistBatch', () => {
  const t = useTestDb();

  before(async () => {
    for (const [chainId, network] of [
      [1, 'mainnet'],
      [31337, 'devnet'],
    ] as const) {
      await indexerState.insertIfMissing(t.db, { chainId, network, startBlock: 100 });
    }
  });

  it('writes a batch right after the cursor and moves it with the rows', async () => {
    await persistBatch(t.db, batchAt(1, 100, hash(0xb10c00 + 99), [bundleTx(100, 2)]), options);
    expect(await indexerState.findCursor(t.db, 1)).to.include({ indexedBlock: 100, indexedBlockHash: hash(0xb10c00 + 100) });
  });

  it('refuses a batch that does not start at the cursor, writing nothing', async () => {
    const failure = await persistBatch(t.db, batchAt(1, 105, hash(1), [bundleTx(105, 1)]), options).catch((e: Error) => e);
    expect(failure).to.be.instanceOf(CursorMovedError);
    const { rows } = await t.db.query(`select 1 from user_ops where chain_id = 1 and block_number = 105`);
    expect(rows).to.have.length(0);
  });

  it('refuses a batch whose first block does not extend the stored chain (a reorg), writing nothing', async () => {
    const failure = await persistBatch(t.db, batchAt(1, 101, hash(0xdead), [bundleTx(101, 1)]), options).catch((e: Error) => e);
    expect(failure).to.be.instanceOf(ParentMismatchError);
    expect((failure as ParentMismatchError).blockNumber).to.equal(101);
    const { rows } = await t.db.query(`select 1 from user_ops where chain_id = 1 and block_number = 101`);
    expect(rows).to.have.length(0);
    expect(await indexerState.findCursor(t.db, 1)).to.include({ indexedBlock: 100 });
  });

  it('keeps two networks apart: the same op hashes on two chains are two ops, with separate totals', async () => {
    await persistBatch(t.db, batchAt(31337, 100, hash(0xb10c00 + 99), [bundleTx(100, 2)]), options);
    const { rows } = await t.db.query<{ chain_id: string; n: string }>(
      'select chain_id, count(*) as n from user_ops group by chain_id order by chain_id',
    );
    expect(rows).to.deep.equal([
      { chain_id: '1', n: '2' },
      { chain_id: '31337', n: '2' },
    ]);
    const { rows: stats } = await t.db.query<{ chain_id: string; user_ops_count: string }>(
      `select chain_id, user_ops_count from entity_stats where kind = 'bundler' order by chain_id`,
    );
    expect(stats).to.deep.equal([
      { chain_id: '1', user_ops_count: '2' },
      { chain_id: '31337', user_ops_count: '2' },
    ]);
  });

  it('resolves a custom EntryPoint address to its configured version (ENTRYPOINTS_<NAME>)', async () => {
    const entryPoints = new Map([...ENTRY_POINTS, [CUSTOM_EP, 'v0.6' as const]]);
    const op = { sender: addr(0x600), nonce: 3n, callGasLimit: 1n << 70n };
    const raw = new TxBuilder(hash(0x7777), 101)
      .beforeExecution(CUSTOM_EP)
      .opEvent(CUSTOM_EP, { hash: hash(0x6001), sender: op.sender, nonce: op.nonce })
      .raw(handleOpsV06([op], addr(0xbe)), { to: CUSTOM_EP });
    await persistBatch(t.db, batchWith(entryPoints, { chainId: 1, block: 101, parent: hash(0xb10c00 + 100), txs: [raw] }), options);
    const { rows } = await t.db.query<{ entry_point: string; entry_point_version: string; call_gas_limit: string; decode_status: string }>(
      `select b.entry_point, o.entry_point_version, o.call_gas_limit, o.decode_status from user_ops o
       join bundles b on b.chain_id = o.chain_id and b.tx_hash = o.tx_hash and b.bundle_index = o.bundle_index
       where o.chain_id = 1 and o.user_op_hash = $1`,
      [bytea(hash(0x6001))],
    );
    expect(rows).to.deep.equal([
      { entry_point: CUSTOM_EP, entry_point_version: 'v0.6', call_gas_limit: String(1n << 70n), decode_status: 'ok' },
    ]);
  });
});
