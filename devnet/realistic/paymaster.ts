/**
 * The paymaster service a wallet calls while building an op (ERC-7677's pm_getPaymasterStubData and
 * pm_getPaymasterData, here in-process): it sponsors with Pimlico's singleton paymaster, in verifying
 * mode (the sponsor pays) or ERC-20 mode (the paymaster charges the account in a token in postOp,
 * so an account that spends its tokens during execution makes postOp revert).
 *
 * paymasterData = mode byte ‖ mode config ‖ the signer's EIP-191 signature of the paymaster's getHash.
 * @see https://github.com/pimlicolabs/singleton-paymaster (config layout), https://eips.ethereum.org/EIPS/eip-7677
 */
import { concat, encodePacked, maxUint256, encodeFunctionData, parseAbi, type Address, type Hex, type PublicClient } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import type { EntryPointVersion } from '../../shared/networks.js';
import { mockPaymasterModule, type PaymasterMode, type RealisticContracts } from './contracts.js';

/** Token units per 1e18 wei of gas (an 18-decimal token at 3,000 per ether). */
const EXCHANGE_RATE = 3000n * 10n ** 18n;
const POST_OP_GAS = 100_000n;
const PAYMASTER_VERIFICATION_GAS = 300_000n;
const PAYMASTER_POST_OP_GAS = 150_000n;
const VALID_FOR_SECONDS = 3600;
/** A signature that recovers to some address (the paymaster's ECDSA.recover reverts on malformed ones), for estimation. */
const DUMMY_SIGNATURE: Hex =
  '0xcd91f19f0f19ce862d7bec7b7d9b95457145afc6f639c28fd0360f488937bfa41e6eedcd3a46054fd95fcd0e3ef6b0bc0a615c4d975eef55c8a3517257904d5b1c';

type GetHash = (mode: number, op: unknown) => Promise<Hex>;

/** viem's `paymaster` option of a bundler client: stub data for estimation, then the signed data. */
export type PaymasterService = {
  getPaymasterStubData(op: Record<string, unknown>): Promise<Record<string, unknown>>;
  getPaymasterData(op: Record<string, unknown>): Promise<Record<string, unknown>>;
};

export async function paymasterService(
  { client, contracts, signer }: { client: PublicClient; contracts: RealisticContracts; signer: PrivateKeyAccount },
  version: EntryPointVersion,
  mode: PaymasterMode,
): Promise<PaymasterService> {
  const { singletonPaymaster06Abi, singletonPaymaster07Abi } = (await mockPaymasterModule('helpers/abi.js')) as Record<
    'singletonPaymaster06Abi' | 'singletonPaymaster07Abi',
    readonly unknown[]
  >;
  const address = contracts.paymasters[version];
  const getHash: GetHash = (modeNumber, op) =>
    client.readContract({
      address,
      abi: (version === 'v0.6' ? singletonPaymaster06Abi : singletonPaymaster07Abi) as never,
      functionName: 'getHash',
      args: [modeNumber, op],
    });
  const modeNumber = mode === 'verifying' ? 0 : 1;
  const config = (): Hex => {
    const validUntil = Math.floor(Date.now() / 1000) + VALID_FOR_SECONDS;
    // Mode byte: mode << 1 | allowAllBundlers.
    if (mode === 'verifying') return encodePacked(['uint8', 'uint48', 'uint48'], [(0 << 1) | 1, validUntil, 0]);
    return encodePacked(
      ['uint8', 'uint8', 'uint48', 'uint48', 'address', 'uint128', 'uint256', 'uint128', 'address'],
      [(1 << 1) | 1, 0, validUntil, 0, contracts.paymasterToken, POST_OP_GAS, EXCHANGE_RATE, 1n, contracts.paymasterTreasury],
    );
  };
  const gasFields = {
    paymaster: address,
    paymasterVerificationGasLimit: PAYMASTER_VERIFICATION_GAS,
    paymasterPostOpGasLimit: PAYMASTER_POST_OP_GAS,
  };
  const build = async (op: Record<string, unknown>, sign: boolean): Promise<Record<string, unknown>> => {
    const cfg = config();
    if (version === 'v0.6') {
      if (!sign) return { paymasterAndData: concat([address, cfg, DUMMY_SIGNATURE]) };
      const hash = await getHash(modeNumber, { ...v06Struct(op), paymasterAndData: concat([address, cfg]), signature: '0x' });
      return { paymasterAndData: concat([address, cfg, await signer.signMessage({ message: { raw: hash } })]) };
    }
    if (!sign) return { ...gasFields, paymasterData: concat([cfg, DUMMY_SIGNATURE]) };
    const packed = toPackedUserOperation({ ...(op as unknown as UserOperation<'0.7'>), ...gasFields, paymasterData: cfg, signature: '0x' });
    const hash = await getHash(modeNumber, packed);
    return { ...gasFields, paymasterData: concat([cfg, await signer.signMessage({ message: { raw: hash } })]) };
  };
  return {
    getPaymasterStubData: (op) => build(op, false),
    getPaymasterData: (op) => build(op, true),
  };
}

function v06Struct(op: Record<string, unknown>) {
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode ?? '0x',
    callData: op.callData,
    callGasLimit: op.callGasLimit,
    verificationGasLimit: op.verificationGasLimit,
    preVerificationGas: op.preVerificationGas,
    maxFeePerGas: op.maxFeePerGas,
    maxPriorityFeePerGas: op.maxPriorityFeePerGas,
  };
}

/** The call that lets the ERC-20 mode take the account's token (the first token-paid op carries it). */
export function approvePaymasterCall(
  contracts: RealisticContracts,
  version: EntryPointVersion,
): { target: Address; value: bigint; data: Hex } {
  return {
    target: contracts.paymasterToken,
    value: 0n,
    data: encodeFunctionData({
      abi: parseAbi(['function approve(address,uint256) returns (bool)']),
      functionName: 'approve',
      args: [contracts.paymasters[version], maxUint256],
    }),
  };
}
