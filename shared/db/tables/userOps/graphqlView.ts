/**
 * The subgraph's UserOp over `user_ops` (server/graphql): each field as SQL over the op's row, the
 * fields the row lacks read by correlated subqueries (evaluated only for the fields a query
 * selects), the input fields read from the transaction's input where the row keeps them there.
 */
import { OP_FIELD_SLOTS } from '../../../calldata/userOpLayout.js';
import { byteaLiteral, column, hashIndexId, type EntityView } from '../../entityView.js';
import { firstCallValueSql } from '../userOpCalls.js';
import { beneficiaryOf, blockOfTransaction, ofBundle, ofTransaction } from './storedForm.js';
import { ZERO_ADDRESS } from '../../../chain/constants.js';

const gasPrice = 'case when t.actual_gas_used > 0 then div(t.actual_gas_cost, t.actual_gas_used) end';

/**
 * An input field of the op: its column, or, when the op keeps it in its transaction's input
 * (op_at), read from there at its head slot (OP_FIELD_SLOTS) by the database functions
 * opscan_op_bytes and opscan_op_word.
 */
function inputField(columnName: string, read: 'opscan_op_bytes' | 'opscan_op_word', slots: { v06: number | null; packed: number }): string {
  const slot =
    slots.v06 === null ? `${slots.packed}` : `case when t.entry_point_version = 'v0.6' then ${slots.v06} else ${slots.packed} end`;
  const fromInput = `(select ${read}(bt.input, t.op_at, ${slot}) from bundle_transactions bt where bt.chain_id = t.chain_id and bt.tx_hash = t.tx_hash)`;
  // v0.6 ops have no packed gas words: null there, as the column was.
  const guarded = slots.v06 === null ? `case when t.entry_point_version <> 'v0.6' then ${fromInput} end` : fromInput;
  return `coalesce(t.${columnName}, case when t.op_at is not null then ${guarded} end)`;
}
const { v06, packed } = OP_FIELD_SLOTS;
const postOpReverted = "t.failure = 'postop_reverted'";

export const userOpView: EntityView = {
  from: 'user_ops t',
  block: 't.block_number',
  id: hashIndexId('t.user_op_hash', 't.log_index', 'bytea'),
  fields: {
    userOpHash: column('t.user_op_hash', 'Bytes', 'bytea'),
    // Found through the transaction's block (user_ops has no index by transaction).
    transactionHash: {
      ...column('t.tx_hash', 'Bytes', 'bytea'),
      equals: (param) => `(t.tx_hash = ${param} and t.block_number = (${blockOfTransaction(param)}))`,
      equalsAny: (param) => `(t.tx_hash = any(${param}) and t.block_number in (${blockOfTransaction(`any(${param})`)}))`,
    },
    sender: column('t.sender', 'Bytes', 'bytea'),
    // The first call's target, kept on the op so that it filters and sorts like the sender.
    target: column('t.target', 'Bytes', 'bytea', true),
    // The first decoded call's value (null without calls; calls_value is null when every value is zero).
    value: column(firstCallValueSql, 'BigInt', 'numeric', true),
    // The EntryPoint's event names the zero address when an op had no paymaster; so does the subgraph.
    paymaster: {
      ...column(`coalesce(t.paymaster, ${byteaLiteral(ZERO_ADDRESS)})`, 'Bytes', 'bytea'),
      equals: (param) => `(t.paymaster = ${param} or (t.paymaster is null and ${param} = ${byteaLiteral(ZERO_ADDRESS)}))`,
    },
    nonce: column('t.nonce', 'BigInt', 'numeric'),
    success: column('t.success', 'Boolean', 'bool'),
    actualGasCost: column('t.actual_gas_cost', 'BigInt', 'numeric'),
    actualGasUsed: column('t.actual_gas_used', 'BigInt', 'numeric'),
    actualGasPrice: column(gasPrice, 'BigInt', 'numeric', true),
    gasPrice: column(gasPrice, 'BigInt', 'numeric', true),
    revertReason: column(`case when ${postOpReverted} then null else t.revert_reason end`, 'Bytes', 'bytea', true),
    paymasterRevertReason: column(`case when ${postOpReverted} then t.revert_reason end`, 'Bytes', 'bytea', true),
    // Block time never decreases along the chain: the (indexed) block number sorts like it.
    blockTime: { ...column('t.block_time', 'BigInt', 'int8'), order: 't.block_number' },
    blockNumber: column('t.block_number', 'BigInt', 'int8'),
    logIndex: column('t.log_index', 'Int', 'int4'),
    bundleIndex: column('t.bundle_index', 'Int', 'int4'),
    input: column(ofTransaction('t', 'input'), 'Bytes', 'bytea', true),
    callData: column(inputField('call_data', 'opscan_op_bytes', { v06: v06.callData, packed: packed.callData }), 'Bytes', 'bytea', true),
    beneficiary: column(beneficiaryOf('t'), 'Bytes', 'bytea', true),
    bundler: column('t.bundler', 'Bytes', 'bytea'),
    // The subgraph answers `0x` for an op that deployed nothing.
    factory: column(`coalesce(t.factory, ${byteaLiteral('0x')})`, 'Bytes', 'bytea'),
    initCode: column(inputField('init_code', 'opscan_op_bytes', { v06: v06.initCode, packed: packed.initCode }), 'Bytes', 'bytea', true),
    signature: column(inputField('signature', 'opscan_op_bytes', { v06: v06.signature, packed: packed.signature }), 'Bytes', 'bytea', true),
    paymasterAndData: column(
      inputField('paymaster_and_data', 'opscan_op_bytes', { v06: v06.paymasterAndData, packed: packed.paymasterAndData }),
      'Bytes',
      'bytea',
      true,
    ),
    callGasLimit: column('t.call_gas_limit', 'BigInt', 'numeric', true),
    verificationGasLimit: column('t.verification_gas_limit', 'BigInt', 'numeric', true),
    preVerificationGas: column('t.pre_verification_gas', 'BigInt', 'numeric', true),
    maxFeePerGas: column('t.max_fee_per_gas', 'BigInt', 'numeric', true),
    maxPriorityFeePerGas: column('t.max_priority_fee_per_gas', 'BigInt', 'numeric', true),
    accountGasLimits: column(
      inputField('account_gas_limits', 'opscan_op_word', { v06: null, packed: packed.accountGasLimits }),
      'Bytes',
      'bytea',
      true,
    ),
    gasFees: column(inputField('gas_fees', 'opscan_op_word', { v06: null, packed: packed.gasFees }), 'Bytes', 'bytea', true),
    // As toUserOp: the op's gas limits summed (v0.7+ adds the paymaster's), null until decoded.
    gasLimit: column(
      `t.call_gas_limit + t.verification_gas_limit + t.pre_verification_gas + case when t.entry_point_version = 'v0.6' then 0
         else coalesce(t.paymaster_verification_gas_limit, 0) + coalesce(t.paymaster_post_op_gas_limit, 0) end`,
      'BigInt',
      'numeric',
      true,
    ),
    // Not recorded per op (the subgraph's is the block's base fee).
    baseFeePerGas: column('null::numeric', 'BigInt', 'numeric', true),
    entryPoint: column(ofBundle('t', 'entry_point'), 'Bytes', 'bytea'),
    entryPointVersion: column('t.entry_point_version', 'String', 'text'),
  },
};
