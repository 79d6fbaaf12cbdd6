/**
 * User operations as the devnet builds them: one unpacked shape for every EntryPoint version,
 * packed for v0.7/v0.8 only when encoded; the userOpHash per version (as the EntryPoints compute it);
 * owner signatures as each account family checks them; and the handleOps calldata.
 */
import { AbiCoder, Interface, concat, getBytes, hashMessage, keccak256, toBeHex, toUtf8Bytes, zeroPadValue, type SigningKey } from 'ethers';
import { entryPointArtifact } from './artifacts.js';

export type EpVersion = 'v0.6' | 'v0.7' | 'v0.8';
export const EP_VERSIONS: readonly EpVersion[] = ['v0.6', 'v0.7', 'v0.8'];

/** Fields as the v0.6 struct has them; v0.7+ pack the gas pairs into two bytes32 when encoded. */
export type UserOp = {
  sender: string;
  nonce: bigint;
  initCode: string;
  callData: string;
  callGasLimit: bigint;
  verificationGasLimit: bigint;
  preVerificationGas: bigint;
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
  /** Exactly as sent: v0.6 paymaster‖data; v0.7+ paymaster‖pmVerificationGas(16)‖postOpGas(16)‖data. */
  paymasterAndData: string;
  signature: string;
};

const abi = AbiCoder.defaultAbiCoder();

/** High 128 bits ‖ low 128 bits, as v0.7+ `accountGasLimits` and `gasFees` are laid out. */
export function packUint128Pair(high: bigint, low: bigint): string {
  return zeroPadValue(toBeHex((high << 128n) | low), 32);
}

export function packedGasFields(op: UserOp): { accountGasLimits: string; gasFees: string } {
  return {
    accountGasLimits: packUint128Pair(op.verificationGasLimit, op.callGasLimit),
    gasFees: packUint128Pair(op.maxPriorityFeePerGas, op.maxFeePerGas),
  };
}

/** v0.7+ paymasterAndData: the paymaster's own gas limits travel inside it. */
export function packPaymasterAndData(version: EpVersion, paymaster: string, gas: { verification: bigint; postOp: bigint }): string {
  if (version === 'v0.6') return paymaster.toLowerCase();
  return concat([paymaster, zeroPadValue(toBeHex(gas.verification), 16), zeroPadValue(toBeHex(gas.postOp), 16)]).toLowerCase();
}

export function nonceWithKey(key: bigint, sequence: bigint): bigint {
  return (key << 64n) | sequence;
}

const PACKED_USEROP_TYPEHASH = keccak256(
  toUtf8Bytes(
    'PackedUserOperation(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData)',
  ),
);
const EIP712_DOMAIN_TYPEHASH = keccak256(toUtf8Bytes('EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)'));
const ERC4337_NAME_HASH = keccak256(toUtf8Bytes('ERC4337'));
const VERSION_1_HASH = keccak256(toUtf8Bytes('1'));

export function userOpHash(op: UserOp, version: EpVersion, entryPoint: string, chainId: number): string {
  const h = (data: string): string => keccak256(data);
  if (version === 'v0.6') {
    const inner = abi.encode(
      ['address', 'uint256', 'bytes32', 'bytes32', 'uint256', 'uint256', 'uint256', 'uint256', 'uint256', 'bytes32'],
      [
        op.sender,
        op.nonce,
        h(op.initCode),
        h(op.callData),
        op.callGasLimit,
        op.verificationGasLimit,
        op.preVerificationGas,
        op.maxFeePerGas,
        op.maxPriorityFeePerGas,
        h(op.paymasterAndData),
      ],
    );
    return h(abi.encode(['bytes32', 'address', 'uint256'], [h(inner), entryPoint, chainId]));
  }
  const { accountGasLimits, gasFees } = packedGasFields(op);
  const fields = [
    op.sender,
    op.nonce,
    h(op.initCode),
    h(op.callData),
    accountGasLimits,
    op.preVerificationGas,
    gasFees,
    h(op.paymasterAndData),
  ];
  const types = ['address', 'uint256', 'bytes32', 'bytes32', 'bytes32', 'uint256', 'bytes32', 'bytes32'];
  if (version === 'v0.7') {
    const inner = abi.encode(types, fields);
    return h(abi.encode(['bytes32', 'address', 'uint256'], [h(inner), entryPoint, chainId]));
  }
  // v0.8: EIP-712 typed data, domain ("ERC4337", "1", chainId, entryPoint).
  const structHash = h(abi.encode(['bytes32', ...types], [PACKED_USEROP_TYPEHASH, ...fields]));
  const domainSeparator = h(
    abi.encode(
      ['bytes32', 'bytes32', 'bytes32', 'uint256', 'address'],
      [EIP712_DOMAIN_TYPEHASH, ERC4337_NAME_HASH, VERSION_1_HASH, chainId, entryPoint],
    ),
  );
  return h(concat(['0x1901', domainSeparator, structHash]));
}

/**
 * How an account family checks its owner's signature: SimpleAccount v0.6/v0.7 recover from the
 * eth-signed-message hash of userOpHash; SimpleAccount v0.8 (EIP-712 hash) and our MiniAccount
 * recover from the raw userOpHash.
 */
export type SignatureScheme = 'eth-signed-message' | 'raw-hash';

export function signUserOpHash(hash: string, owner: SigningKey, scheme: SignatureScheme): string {
  const digest = scheme === 'eth-signed-message' ? hashMessage(getBytes(hash)) : hash;
  return owner.sign(digest).serialized.toLowerCase();
}

const entryPointInterfaces: Record<EpVersion, Interface> = {
  'v0.6': new Interface(entryPointArtifact('v0.6').abi),
  'v0.7': new Interface(entryPointArtifact('v0.7').abi),
  'v0.8': new Interface(entryPointArtifact('v0.8').abi),
};

export function entryPointInterface(version: EpVersion): Interface {
  return entryPointInterfaces[version];
}

/** The struct as the version's handleOps/getUserOpHash expect it. */
export function toStruct(op: UserOp, version: EpVersion): Record<string, unknown> {
  if (version === 'v0.6') return { ...op };
  const { accountGasLimits, gasFees } = packedGasFields(op);
  return {
    sender: op.sender,
    nonce: op.nonce,
    initCode: op.initCode,
    callData: op.callData,
    accountGasLimits,
    preVerificationGas: op.preVerificationGas,
    gasFees,
    paymasterAndData: op.paymasterAndData,
    signature: op.signature,
  };
}

export function encodeHandleOps(version: EpVersion, ops: UserOp[], beneficiary: string): string {
  return entryPointInterfaces[version].encodeFunctionData('handleOps', [ops.map((op) => toStruct(op, version)), beneficiary]);
}
