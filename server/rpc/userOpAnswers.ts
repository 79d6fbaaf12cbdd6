import { AbiCoder, getAddress as checksummed, hexlify } from 'ethers';
import { keccak256Bytes } from '../../shared/keccak.js';
import type { StoredReceipt } from '../../shared/db/tables/bundleTransactions.js';
import type { TransactionLog } from '../../shared/db/tables/logs.js';
import type { StoredUserOp } from '../../shared/db/tables/userOps.js';
import { TOPICS, ZERO_ADDRESS } from '../../shared/chain/constants.js';

/**
 * The answers of the ERC-4337 read methods (ERC-7769) built from the index, written as bundlers
 * write them, Alto's being the reference: quantities as minimal hex, addresses checksummed where
 * Alto checksums them, bytes as lower-case hex, absent fields left out rather than null.
 */

type Json = Record<string, unknown>;

export const quantity = (value: bigint | string | number): string => `0x${BigInt(value).toString(16)}`;

/**
 * Checksummed addresses, remembered: a receipt repeats a few addresses (the EntryPoint, tokens, the
 * accounts), and each checksum is a keccak. Bounded: emptied when full.
 */
const CHECKSUMS = new Map<string, string>();
const MAX_CHECKSUMS = 50_000;
function getAddress(address: string): string {
  let sum = CHECKSUMS.get(address);
  if (sum === undefined) {
    if (CHECKSUMS.size >= MAX_CHECKSUMS) CHECKSUMS.clear();
    sum = checksummed(address);
    CHECKSUMS.set(address, sum);
  }
  return sum;
}

/** The bloom filter of a receipt's logs (the yellow paper's M3:2048 over each address and topic). */
export function logsBloom(logs: readonly TransactionLog[]): string {
  const bloom = new Uint8Array(256);
  const add = (hex: string) => {
    const hash = keccak256Bytes(Buffer.from(hex.slice(2), 'hex'));
    for (let i = 0; i < 6; i += 2) {
      const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
      bloom[255 - (bit >> 3)]! |= 1 << (bit & 7);
    }
  };
  for (const log of logs) {
    add(log.address);
    for (const topic of log.topics) add(topic);
  }
  return hexlify(bloom);
}

/** A receipt log as the node writes it (blockTimestamp where the node gave one), its address checksummed as bundlers answer it. */
function logAnswer(r: StoredReceipt, log: TransactionLog, i: number): Json {
  return {
    address: getAddress(log.address),
    topics: log.topics,
    data: log.data,
    blockHash: r.blockHash,
    blockNumber: quantity(r.blockNumber),
    ...(r.blockTimestamp === null ? {} : { blockTimestamp: quantity(r.blockTimestamp) }),
    transactionHash: r.txHash,
    transactionIndex: quantity(r.txIndex),
    logIndex: quantity(r.firstLogIndex + i),
    removed: false,
  };
}

/**
 * The bundle transaction's receipt as the node gave it: the stored columns, its logs, their bloom,
 * and the fields it kept as sent (receipt_rest); addresses checksummed, as bundlers answer them.
 */
function receiptAnswer(r: StoredReceipt, logs: Json[]): Json {
  return {
    ...r.rest,
    transactionHash: r.txHash,
    transactionIndex: quantity(r.txIndex),
    blockHash: r.blockHash,
    blockNumber: quantity(r.blockNumber),
    from: getAddress(r.from),
    to: r.to === null ? null : getAddress(r.to),
    cumulativeGasUsed: r.cumulativeGasUsed === null ? undefined : quantity(r.cumulativeGasUsed),
    gasUsed: quantity(r.gasUsed),
    contractAddress: typeof r.rest?.contractAddress === 'string' ? getAddress(r.rest.contractAddress) : null,
    logs,
    logsBloom: logsBloom(r.logs),
    status: r.status ? '0x1' : '0x0',
    effectiveGasPrice: quantity(r.effectiveGasPrice),
    type: r.type === null ? undefined : quantity(r.type),
  };
}

const word = (data: string, i: number): bigint => BigInt(`0x${data.slice(2 + 64 * i, 2 + 64 * (i + 1))}`);
const topicAddress = (topic: string): string => getAddress(`0x${topic.slice(26)}`);

/**
 * eth_getUserOperationReceipt's answer for the op `userOpHash` in the transaction `r`, or null when
 * its UserOperationEvent is not among the transaction's logs. The op is read from its event, and its
 * logs are cut as bundlers cut them: after the last BeforeExecution or another op's
 * UserOperationEvent before its own, up to its own; its `reason` is its UserOperationRevertReason.
 */
export function userOpReceiptAnswer(userOpHash: string, r: StoredReceipt): Json | null {
  let start = -1;
  let reason: string | undefined;
  for (let i = 0; i < r.logs.length; i++) {
    const { topics, data, address } = r.logs[i]!;
    if (topics[0] === TOPICS.beforeExecution && topics.length === 1) start = i;
    else if (topics[0] === TOPICS.userOperationRevertReason && topics.length === 3 && topics[1] === userOpHash) {
      try {
        reason = AbiCoder.defaultAbiCoder().decode(['uint256', 'bytes'], data)[1] as string;
      } catch {
        // Not the event's encoding (another contract's event of the same signature): bundlers skip it too.
      }
    } else if (topics[0] === TOPICS.userOperationEvent && topics.length === 4 && data.length === 2 + 64 * 4) {
      if (topics[1] !== userOpHash) {
        start = i;
        continue;
      }
      if (start === -1) return null;
      const paymaster = topicAddress(topics[3]!);
      const logs = r.logs.map((log, j) => logAnswer(r, log, j));
      return {
        userOpHash,
        entryPoint: address,
        sender: topicAddress(topics[2]!),
        nonce: quantity(word(data, 0)),
        ...(paymaster === ZERO_ADDRESS ? {} : { paymaster }),
        actualGasCost: quantity(word(data, 2)),
        actualGasUsed: quantity(word(data, 3)),
        success: word(data, 1) === 1n,
        ...(reason === undefined ? {} : { reason }),
        logs: logs.slice(start + 1, i),
        receipt: receiptAnswer(r, logs),
      };
    }
  }
  return null;
}

const bytesAt = (hex: string, from: number, to?: number): string =>
  `0x${hex.slice(2 + from * 2, to === undefined ? undefined : 2 + to * 2)}`;
const byteLength = (hex: string): number => (hex.length - 2) / 2;

/**
 * A v0.7+ op's initCode unpacked as bundlers answer it: factory, then factoryData when there is any.
 * An EIP-7702 op may send only the 2-byte marker `0x7702` (v0.8+), which is its factory as viem
 * writes it (Alto cannot read such an op back and answers null).
 */
function unpackedInitCode(initCode: string): Json {
  if (initCode === '0x') return {};
  if (byteLength(initCode) < 20) return { factory: initCode };
  return {
    factory: getAddress(bytesAt(initCode, 0, 20)),
    ...(byteLength(initCode) > 20 ? { factoryData: bytesAt(initCode, 20) } : {}),
  };
}

/** A v0.7+ op's paymasterAndData unpacked as bundlers answer it. */
function unpackedPaymaster(paymasterAndData: string): Json {
  if (paymasterAndData === '0x') return {};
  return {
    paymaster: getAddress(bytesAt(paymasterAndData, 0, 20)),
    paymasterVerificationGasLimit: quantity(bytesAt(paymasterAndData, 20, 36)),
    paymasterPostOpGasLimit: quantity(bytesAt(paymasterAndData, 36, 52)),
    ...(byteLength(paymasterAndData) > 52 ? { paymasterData: bytesAt(paymasterAndData, 52) } : {}),
  };
}

/**
 * eth_getUserOperationByHash's answer: the op in its EntryPoint version's RPC form (v0.6 packed,
 * v0.7+ unpacked) nested under `userOperation`, with where it was included; null when its fields
 * are not known (an op whose calldata could not be decoded).
 */
export function userOpByHashAnswer(op: StoredUserOp): Json | null {
  const { init_code: initCode, call_data: callData, paymaster_and_data: paymasterAndData, signature } = op;
  const gas = [op.call_gas_limit, op.verification_gas_limit, op.pre_verification_gas, op.max_fee_per_gas, op.max_priority_fee_per_gas];
  if (initCode === null || callData === null || paymasterAndData === null || signature === null || gas.some((g) => g === null)) return null;
  const [callGasLimit, verificationGasLimit, preVerificationGas, maxFeePerGas, maxPriorityFeePerGas] = gas.map((g) => quantity(g!));
  const userOperation =
    op.entry_point_version === 'v0.6'
      ? {
          sender: getAddress(op.sender),
          nonce: quantity(op.nonce),
          initCode,
          callData,
          callGasLimit,
          verificationGasLimit,
          preVerificationGas,
          maxFeePerGas,
          maxPriorityFeePerGas,
          paymasterAndData,
          signature,
        }
      : {
          sender: getAddress(op.sender),
          nonce: quantity(op.nonce),
          ...unpackedInitCode(initCode),
          callData,
          callGasLimit,
          verificationGasLimit,
          preVerificationGas,
          maxFeePerGas,
          maxPriorityFeePerGas,
          ...unpackedPaymaster(paymasterAndData),
          signature,
        };
  return {
    userOperation,
    entryPoint: getAddress(op.entry_point),
    transactionHash: op.tx_hash,
    blockHash: op.block_hash,
    blockNumber: quantity(op.block_number),
  };
}
