/**
 * Ops as the indexer stores them from a handleOps transaction, for the tests of how an op row keeps
 * its bytes (in the transaction's input at `op_at`; its calls as slices of its callData).
 */
import type { CalldataOp } from '../../../indexer/decode/entryPointDecoder.js';
import { bytea, type Queryable } from '../../../shared/db/client.js';
import type * as userOps from '../../../shared/db/tables/userOps.js';
import type { EntryPointVersion } from '../../../shared/networks.js';
import { CANONICAL_ENTRYPOINTS } from '../../../shared/chain/constants.js';

export const CHAIN = 1;
export const EP_V07 = CANONICAL_ENTRYPOINTS['v0.7'];
export const EP_V06 = CANONICAL_ENTRYPOINTS['v0.6'];
export const BENEFICIARY = '0x00000000000000000000000000000000000000be';
export const word = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
export const hashOf = (n: number) => word(0xab00 + n);

/** The op as the indexer would store it from transaction `tx` (n: its hash and log index). */
export function newOp(c: CalldataOp, version: EntryPointVersion, tx: string, n: number): userOps.NewUserOp {
  return {
    userOpHash: hashOf(n),
    entryPoint: version === 'v0.6' ? EP_V06 : EP_V07,
    entryPointVersion: version,
    sender: c.sender,
    paymaster: null,
    nonce: c.nonce,
    success: true,
    actualGasCost: 1n,
    actualGasUsed: 1n,
    failure: null,
    revertReason: null,
    revertMessage: null,
    blockNumber: 10,
    blockHash: word(10),
    blockTime: 1000,
    txHash: tx,
    txIndex: 0,
    bundleIndex: 0,
    opIndex: c.opIndex,
    opAt: c.structAt + 4,
    logIndex: n,
    execLogFrom: n,
    execLogTo: n,
    bundler: BENEFICIARY,
    beneficiary: BENEFICIARY,
    factory: null,
    aggregator: null,
    initCode: c.initCode,
    callData: c.callData,
    signature: c.signature,
    paymasterAndData: c.paymasterAndData,
    callGasLimit: c.callGasLimit,
    verificationGasLimit: c.verificationGasLimit,
    preVerificationGas: c.preVerificationGas,
    maxFeePerGas: c.maxFeePerGas,
    maxPriorityFeePerGas: c.maxPriorityFeePerGas,
    paymasterVerificationGasLimit: c.paymasterVerificationGasLimit,
    paymasterPostOpGasLimit: c.paymasterPostOpGasLimit,
    accountGasLimits: c.accountGasLimits,
    gasFees: c.gasFees,
    decodeStatus: 'ok',
    eip7702: false,
    paymasterSignature: null,
    target: null,
    calls: [],
  };
}

/** A bundle transaction (block 10, position `txIndex`) sending `input` to `to`. */
export async function insertTransaction(
  db: Queryable,
  { tx, txIndex, to, input }: { tx: string; txIndex: number; to: string; input: string },
): Promise<void> {
  await db.query(
    `insert into bundle_transactions (chain_id, tx_hash, block_number, block_hash, block_time, tx_index, tx_from, tx_to, input, status,
       gas_used, effective_gas_price, fee)
     values ($1, $2, 10, $3, 1000, $4, $5, $6, $7, true, 1, 1, 1)`,
    [CHAIN, bytea(tx), bytea(word(10)), txIndex, bytea(BENEFICIARY), bytea(to), bytea(input)],
  );
}
