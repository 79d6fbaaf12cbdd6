/**
 * The userOpHash of a simulated op, computed by viem's getUserOperationHash (viem/account-abstraction)
 * rather than by the indexer's own hash function: the simulator's truth is then independent of the
 * code it checks, so an indexer that hashed an op wrongly would disagree with it. The op is handed
 * over in viem's shape: v0.6 as sent; v0.7 and v0.8 with the init code split into factory and
 * factory data, and paymasterAndData into the paymaster, its two gas limits and its data.
 */
import { getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import type { Address, Hex } from 'viem';
import type { EpVersion, UserOp } from '../devnet/userop.js';

const hex = (s: string): Hex => s as Hex;
const address = (s: string): Address => s.toLowerCase() as Address;

/** The bytes `from`–`to` (0-based, end excluded) of a 0x hex string. */
const bytes = (data: string, from: number, to?: number): Hex => `0x${data.slice(2 + from * 2, to === undefined ? undefined : 2 + to * 2)}`;

/** A v0.7+ paymasterAndData: the paymaster (20 bytes), its verification and postOp gas limits (16 each), then its data. */
const PAYMASTER_FIELDS_BYTES = 52;

/** The hash the EntryPoint `entryPoint` of `version` on `chainId` computes for `op`. */
export function opHash(op: UserOp, version: EpVersion, entryPoint: string, chainId: number): string {
  const common = {
    sender: address(op.sender),
    nonce: op.nonce,
    callData: hex(op.callData),
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
    signature: hex(op.signature),
  };
  if (version === 'v0.6') {
    const userOperation: UserOperation<'0.6'> = { ...common, initCode: hex(op.initCode), paymasterAndData: hex(op.paymasterAndData) };
    return getUserOperationHash({ chainId, entryPointAddress: address(entryPoint), entryPointVersion: '0.6', userOperation });
  }
  const hasFactory = op.initCode.length > 2;
  const hasPaymaster = op.paymasterAndData.length >= 2 + PAYMASTER_FIELDS_BYTES * 2;
  const userOperation: UserOperation<'0.7' | '0.8'> = {
    ...common,
    ...(hasFactory ? { factory: address(bytes(op.initCode, 0, 20)), factoryData: bytes(op.initCode, 20) } : {}),
    ...(hasPaymaster
      ? {
          paymaster: address(bytes(op.paymasterAndData, 0, 20)),
          paymasterVerificationGasLimit: BigInt(bytes(op.paymasterAndData, 20, 36)),
          paymasterPostOpGasLimit: BigInt(bytes(op.paymasterAndData, 36, 52)),
          paymasterData: bytes(op.paymasterAndData, PAYMASTER_FIELDS_BYTES),
        }
      : {}),
  };
  return getUserOperationHash({
    chainId,
    entryPointAddress: address(entryPoint),
    entryPointVersion: version === 'v0.7' ? '0.7' : '0.8',
    userOperation,
  });
}
