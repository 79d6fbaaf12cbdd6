/**
 * Reads what the indexer stored back into the devnet ground truth's shapes (devnet/truth.ts), so
 * tests compare every field of every op, bundle, account, transfer and day with deep equality.
 */
import type { Queryable } from '../../shared/db/client.js';
import { opCallsSql } from '../../shared/db/tables/userOpCalls.js';
import { txHashOf } from '../../shared/db/tables/tokenTransfers.js';
import { keptByBundle, withInputFields, type UserOpRow } from '../../shared/db/tables/userOps.js';
import { knownPlainTransfers } from '../../devnet/index.js';
import type { TruthAccount, TruthBundle, TruthDay, TruthPlainTransfer, TruthTransfer, TruthUserOp } from '../../devnet/index.js';

export type StoredTruth = {
  userOps: TruthUserOp[];
  bundles: TruthBundle[];
  accounts: TruthAccount[];
  transfers: TruthTransfer[];
  /** Token transfers of plain transactions (no bundle in them) to or from a known address. */
  plainTransfers: TruthPlainTransfer[];
  days: TruthDay[];
};

type Row = Record<string, string | number | boolean | null>;
const num = (v: unknown): number => Number(v);
const str = (v: unknown): string => String(v);

/** What a token_transfers row says moved, from whom to whom (an op's transfer and a plain one alike). */
function transferParties(t: Record<string, unknown>): Pick<TruthTransfer, 'standard' | 'token' | 'from' | 'to' | 'value' | 'tokenId'> {
  return {
    standard: str(t.standard) as TruthTransfer['standard'],
    token: t.token as string | null,
    from: str(t.from_address),
    to: str(t.to_address),
    value: str(t.value),
    tokenId: t.token_id === null ? null : str(t.token_id),
  };
}

export async function readStoredTruth(db: Queryable, chainId: number): Promise<StoredTruth> {
  const q = async (sql: string): Promise<Row[]> => (await db.query<Row>(sql, [chainId])).rows;
  const calls = new Map<string, Array<{ target: string; value: string; data: string }>>();
  for (const c of await q(
    `select u.user_op_hash, c.target, c.value::text as value, c.data
     from user_ops u cross join lateral ${opCallsSql('u')} c
     where u.chain_id = $1 order by u.user_op_hash, c.call_index`,
  )) {
    const list = calls.get(str(c.user_op_hash)) ?? [];
    list.push({ target: str(c.target), value: str(c.value), data: str(c.data) });
    calls.set(str(c.user_op_hash), list);
  }
  const storedOps = await db.query<UserOpRow & { input: string | null; target: string | null }>(
    `select u.*, ${keptByBundle('u')},
       (select bt.input from bundle_transactions bt where bt.chain_id = u.chain_id and bt.tx_hash = u.tx_hash) as input
     from user_ops u where u.chain_id = $1 order by u.block_number, u.log_index`,
    [chainId],
  );
  const userOps: TruthUserOp[] = storedOps.rows.map(withInputFields).map((o) => ({
    userOpHash: str(o.user_op_hash),
    sender: str(o.sender),
    nonce: str(o.nonce),
    entryPoint: str(o.entry_point),
    entryPointVersion: str(o.entry_point_version) as TruthUserOp['entryPointVersion'],
    paymaster: o.paymaster,
    factory: o.factory,
    success: Boolean(o.success),
    // The ground truth records UserOperationRevertReason only (PostOpRevertReason is stored with failure postop_reverted).
    revertReason: o.failure === 'execution_reverted' ? o.revert_reason : null,
    actualGasCost: str(o.actual_gas_cost),
    actualGasUsed: str(o.actual_gas_used),
    transactionHash: str(o.tx_hash),
    blockNumber: num(o.block_number),
    blockTime: num(o.block_time),
    bundleIndex: num(o.bundle_index),
    logIndex: num(o.log_index),
    bundler: str(o.bundler),
    beneficiary: str(o.beneficiary),
    callData: str(o.call_data),
    initCode: str(o.init_code),
    paymasterAndData: str(o.paymaster_and_data),
    signature: str(o.signature),
    callGasLimit: str(o.call_gas_limit),
    verificationGasLimit: str(o.verification_gas_limit),
    preVerificationGas: str(o.pre_verification_gas),
    maxFeePerGas: str(o.max_fee_per_gas),
    maxPriorityFeePerGas: str(o.max_priority_fee_per_gas),
    // The first call's target as the op row keeps it (user_ops.target), the rest from calls_target:
    // the truth's calls then check both.
    calls: (calls.get(str(o.user_op_hash)) ?? []).map((c, i) => (i === 0 ? { ...c, target: o.target as string } : c)),
  }));
  const opsByBundle = new Map<string, string[]>();
  for (const o of userOps) {
    const key = `${o.transactionHash}:${o.bundleIndex}`;
    opsByBundle.set(key, [...(opsByBundle.get(key) ?? []), o.userOpHash]);
  }
  const bundles: TruthBundle[] = (
    await q(`select b.*, t.status, t.fee::text as fee from bundles b join bundle_transactions t on t.chain_id = b.chain_id and t.tx_hash = b.tx_hash
             where b.chain_id = $1 order by b.block_number, t.tx_index, b.bundle_index`)
  ).map((b) => ({
    transactionHash: str(b.tx_hash),
    bundleIndex: num(b.bundle_index),
    blockNumber: num(b.block_number),
    blockTime: num(b.block_time),
    bundler: str(b.bundler),
    beneficiary: str(b.beneficiary),
    entryPoint: str(b.entry_point),
    userOpHashes: opsByBundle.get(`${str(b.tx_hash)}:${num(b.bundle_index)}`) ?? [],
    success: Boolean(b.status),
    transactionFee: str(b.fee),
  }));
  const accounts: TruthAccount[] = (
    await q('select * from accounts where chain_id = $1 and factory is not null order by created_block_number, address')
  ).map((a) => ({
    address: str(a.address),
    factory: str(a.factory),
    userOpHash: str(a.created_user_op_hash),
    transactionHash: str(a.created_tx_hash),
    blockNumber: num(a.created_block_number),
    blockTime: num(a.created_block_time),
  }));
  const tokenTransfers: TruthTransfer[] = (
    await q(`select t.*, ${txHashOf('t')} as transfer_tx_hash from token_transfers t
             where chain_id = $1 and user_op_hash is not null order by block_number, log_index, batch_index`)
  ).map((t) => ({
    ...transferParties(t),
    userOpHash: str(t.user_op_hash),
    transactionHash: str(t.transfer_tx_hash),
    logIndex: num(t.log_index),
  }));
  // An op's native value transfers are not rows: they are its calls' values, moved
  // only when its execution succeeded.
  const nativeTransfers: TruthTransfer[] = userOps.flatMap((o) =>
    o.success
      ? o.calls
          .filter((c) => BigInt(c.value) !== 0n)
          .map((c) => ({
            standard: 'NATIVE' as const,
            token: null,
            from: o.sender,
            to: c.target,
            value: c.value,
            tokenId: null,
            userOpHash: o.userOpHash,
            transactionHash: o.transactionHash,
            logIndex: null,
          }))
      : [],
  );
  const transfers = [...tokenTransfers, ...nativeTransfers];
  const plainTransfers: TruthPlainTransfer[] = (
    await q(`select * from token_transfers t where chain_id = $1 and user_op_hash is null
               and not exists (select 1 from bundle_transactions b where b.chain_id = t.chain_id and b.tx_hash = t.tx_hash)
             order by block_number, log_index, batch_index`)
  ).map((t) => ({
    ...transferParties(t),
    userOpHash: null,
    transactionHash: str(t.tx_hash),
    logIndex: num(t.log_index),
    blockNumber: num(t.block_number),
  }));
  const wallets = new Map<number, string[]>();
  for (const w of await q('select day, address from daily_active_wallets where chain_id = $1 order by day, address')) {
    wallets.set(num(w.day), [...(wallets.get(num(w.day)) ?? []), str(w.address)]);
  }
  const days: TruthDay[] = (await q('select * from daily_stats where chain_id = $1 order by day')).map((d) => ({
    day: num(d.day),
    userOps: num(d.user_ops),
    bundles: num(d.bundles),
    walletsCreated: num(d.wallets_created),
    gasCostCollected: str(d.gas_cost_collected),
    activeWallets: wallets.get(num(d.day)) ?? [],
  }));
  return { userOps, bundles, accounts, transfers, plainTransfers, days };
}

/** `list` sorted by a string key (so stored and truth lists compare whatever their natural order). */
export function sortByKey<T>(list: T[], key: (x: T) => string): T[] {
  return [...list].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

const pad = (n: number): string => String(n).padStart(10, '0');

/** Every list of a ground truth (or a stored one) in one canonical order. */
export function canonical(t: StoredTruth): StoredTruth {
  return {
    userOps: sortByKey(t.userOps, (o) => `${pad(o.blockNumber)}:${pad(o.logIndex)}`),
    bundles: sortByKey(t.bundles, (b) => `${pad(b.blockNumber)}:${b.transactionHash}:${b.bundleIndex}`),
    accounts: sortByKey(t.accounts, (a) => a.address),
    transfers: sortByKey(t.transfers, (x) => `${x.transactionHash}:${x.userOpHash}:${pad((x.logIndex ?? -1) + 1)}:${x.to}:${x.value}`),
    // Those an INDEXER_TRANSFERS=known indexer stores: a party is a sender, paymaster, factory or bundler.
    plainTransfers: sortByKey(knownPlainTransfers(t), (x) => `${pad(x.blockNumber)}:${pad(x.logIndex)}:${x.to}`),
    days: sortByKey(t.days, (d) => pad(d.day)),
  };
}

export type EntityTotals = Map<string, { ops: number; bundles: number; accounts: number; gas: string }>;

/** entity_stats as the ground truth implies it: per role address, ops, bundles, deployments and Σ actualGasCost. */
export function entityTotalsFromTruth(truth: { userOps: TruthUserOp[] }): EntityTotals {
  const acc = new Map<string, { ops: number; bundles: Set<string>; accounts: number; gas: bigint }>();
  for (const o of truth.userOps) {
    const roles: Array<[string, string | null]> = [
      ['bundler', o.bundler],
      ['paymaster', o.paymaster],
      ['factory', o.factory],
      ['beneficiary', o.beneficiary],
    ];
    for (const [kind, address] of roles) {
      if (!address) continue;
      const e = acc.get(`${kind}:${address}`) ?? { ops: 0, bundles: new Set<string>(), accounts: 0, gas: 0n };
      e.ops++;
      e.bundles.add(`${o.transactionHash}:${o.bundleIndex}`);
      if (o.factory) e.accounts++;
      e.gas += BigInt(o.actualGasCost);
      acc.set(`${kind}:${address}`, e);
    }
  }
  return new Map([...acc].map(([k, e]) => [k, { ops: e.ops, bundles: e.bundles.size, accounts: e.accounts, gas: e.gas.toString() }]));
}

export async function readEntityTotals(db: Queryable, chainId: number): Promise<EntityTotals> {
  const { rows } = await db.query<{
    kind: string;
    address: string;
    user_ops_count: string;
    bundles_count: string;
    accounts_count: string;
    actual_gas_cost_sum: string;
  }>(
    'select kind, address, user_ops_count, bundles_count, accounts_count, actual_gas_cost_sum::text from entity_stats where chain_id = $1',
    [chainId],
  );
  return new Map(
    rows.map((r) => [
      `${r.kind}:${r.address}`,
      { ops: Number(r.user_ops_count), bundles: Number(r.bundles_count), accounts: Number(r.accounts_count), gas: r.actual_gas_cost_sum },
    ]),
  );
}

/** Ops per sender, as accounts.user_ops_count must hold it. */
export function opsPerSender(truth: { userOps: TruthUserOp[] }): Map<string, number> {
  const want = new Map<string, number>();
  for (const o of truth.userOps) want.set(o.sender, (want.get(o.sender) ?? 0) + 1);
  return want;
}

export async function readOpsPerAccount(db: Queryable, chainId: number): Promise<Map<string, number>> {
  const { rows } = await db.query<{ address: string; user_ops_count: string }>(
    'select address, user_ops_count from accounts where chain_id = $1',
    [chainId],
  );
  return new Map(rows.map((r) => [r.address, Number(r.user_ops_count)]));
}

/** Everything the stored data must match after any sequence of batches, restarts and reorgs. */
export async function expectMatchesTruth(
  db: Queryable,
  truth: { chainId: number } & StoredTruth,
  expectFn: (got: unknown, want: unknown, what: string) => void,
): Promise<void> {
  const got = canonical(await readStoredTruth(db, truth.chainId));
  const want = canonical(truth);
  for (const key of ['userOps', 'bundles', 'accounts', 'transfers', 'plainTransfers', 'days'] as const) expectFn(got[key], want[key], key);
  expectFn(await readEntityTotals(db, truth.chainId), entityTotalsFromTruth(truth), 'entity_stats');
  expectFn(await readOpsPerAccount(db, truth.chainId), opsPerSender(truth), 'accounts.user_ops_count');
}
