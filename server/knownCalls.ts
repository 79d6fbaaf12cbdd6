import { Interface, type ParamType, type Result } from 'ethers';
import { ACCOUNT_METHOD_SELECTORS, accountMethod, decodeAccountCalls, multiSendTransactions } from '../shared/calldata/accountCalls.js';
import type { DecodedArgument } from '../shared/models/trace.js';

/**
 * Decoding of the calls an explorer shows by name in call traces: account `execute` variants (the
 * indexer's own table, shared/calldata/accountCalls.ts), Safe, tokens, WETH and the EntryPoint's
 * methods, including the ones it calls on accounts and paymasters. Values are JSON: bigints as
 * decimal strings, addresses and bytes as lower-case hex, structs as objects by field name.
 */

const V06_OP =
  '(address sender, uint256 nonce, bytes initCode, bytes callData, uint256 callGasLimit, uint256 verificationGasLimit, uint256 preVerificationGas, uint256 maxFeePerGas, uint256 maxPriorityFeePerGas, bytes paymasterAndData, bytes signature)';
const PACKED_OP =
  '(address sender, uint256 nonce, bytes initCode, bytes callData, bytes32 accountGasLimits, uint256 preVerificationGas, bytes32 gasFees, bytes paymasterAndData, bytes signature)';
const V06_MEMORY_OP =
  '(address sender, uint256 nonce, uint256 callGasLimit, uint256 verificationGasLimit, uint256 preVerificationGas, address paymaster, uint256 maxFeePerGas, uint256 maxPriorityFeePerGas)';
const V07_MEMORY_OP =
  '(address sender, uint256 nonce, uint256 verificationGasLimit, uint256 callGasLimit, uint256 paymasterVerificationGasLimit, uint256 paymasterPostOpGasLimit, uint256 preVerificationGas, address paymaster, uint256 maxFeePerGas, uint256 maxPriorityFeePerGas)';
const opInfo = (memoryOp: string) => `(${memoryOp} mUserOp, bytes32 userOpHash, uint256 prefund, uint256 contextOffset, uint256 preOpGas)`;

const SIGNATURES = [
  // EntryPoint v0.6 (UserOperation) and v0.7+ (PackedUserOperation).
  `handleOps(${V06_OP}[] ops, address beneficiary)`,
  `handleOps(${PACKED_OP}[] ops, address beneficiary)`,
  `handleAggregatedOps((${V06_OP}[] userOps, address aggregator, bytes signature)[] opsPerAggregator, address beneficiary)`,
  `handleAggregatedOps((${PACKED_OP}[] userOps, address aggregator, bytes signature)[] opsPerAggregator, address beneficiary)`,
  `innerHandleOp(bytes callData, ${opInfo(V06_MEMORY_OP)} opInfo, bytes context)`,
  `innerHandleOp(bytes callData, ${opInfo(V07_MEMORY_OP)} opInfo, bytes context)`,
  'depositTo(address account)',
  'withdrawTo(address withdrawAddress, uint256 withdrawAmount)',
  'addStake(uint32 unstakeDelaySec)',
  'unlockStake()',
  'withdrawStake(address withdrawAddress)',
  // What the EntryPoint calls on the SenderCreator, accounts and paymasters.
  'createSender(bytes initCode)',
  `validateUserOp(${V06_OP} userOp, bytes32 userOpHash, uint256 missingAccountFunds)`,
  `validateUserOp(${PACKED_OP} userOp, bytes32 userOpHash, uint256 missingAccountFunds)`,
  `validatePaymasterUserOp(${V06_OP} userOp, bytes32 userOpHash, uint256 maxCost)`,
  `validatePaymasterUserOp(${PACKED_OP} userOp, bytes32 userOpHash, uint256 maxCost)`,
  'postOp(uint8 mode, bytes context, uint256 actualGasCost)',
  'postOp(uint8 mode, bytes context, uint256 actualGasCost, uint256 actualUserOpFeePerGas)',
  `executeUserOp(${PACKED_OP} userOp, bytes32 userOpHash)`,
  'createAccount(address owner, uint256 salt)',
  // Safe.
  'execTransaction(address to, uint256 value, bytes data, uint8 operation, uint256 safeTxGas, uint256 baseGas, uint256 gasPrice, address gasToken, address refundReceiver, bytes signatures)',
  'multiSend(bytes transactions)',
  // Tokens. ERC-721's transferFrom(from, to, tokenId) has ERC-20's selector: the ERC-20 names are shown.
  'transfer(address to, uint256 value)',
  'transferFrom(address from, address to, uint256 value)',
  'approve(address spender, uint256 value)',
  'setApprovalForAll(address operator, bool approved)',
  'safeTransferFrom(address from, address to, uint256 tokenId)',
  'safeTransferFrom(address from, address to, uint256 tokenId, bytes data)',
  'safeTransferFrom(address from, address to, uint256 id, uint256 value, bytes data)',
  'safeBatchTransferFrom(address from, address to, uint256[] ids, uint256[] values, bytes data)',
  'mint(address to, uint256 amount)',
  // WETH.
  'deposit()',
  'withdraw(uint256 wad)',
  ...ACCOUNT_METHOD_SELECTORS.map(([, signature]) => signature),
];

const KNOWN = new Interface(SIGNATURES.map((s) => `function ${s}`));

/** The argument list the decoded calls of a batch or packed account method are answered as (the SDK's type). */
const CALLS_TYPE = '(address,uint256,bytes)[]';

export type DecodedCall = { method: string; decodedInput: DecodedArgument[] };

/** A decoded ABI value as an answer carries it: integers as decimal strings, addresses and bytes in lower case. */
export function argumentJson(value: unknown, type: ParamType): unknown {
  if (type.isArray()) return (value as unknown[]).map((item) => argumentJson(item, type.arrayChildren));
  if (type.isTuple()) {
    const fields = value as Result;
    return Object.fromEntries(type.components.map((c, i) => [c.name || String(i), argumentJson(fields[i], c)]));
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string' && (type.baseType === 'address' || type.baseType.startsWith('bytes'))) return value.toLowerCase();
  return value;
}

/**
 * The method `input` calls and its arguments, or null when the selector is not a known one or the
 * arguments do not decode. Account methods that carry several or packed calls (`executeBatch`,
 * ERC-7579 `execute(bytes32,bytes)`) answer their scalar arguments and then `calls`, the list of
 * `{target, value, data}` the account makes; Safe's `multiSend` answers its transactions unpacked.
 */
export function decodeCall(input: string): DecodedCall | null {
  if (!/^0x[0-9a-fA-F]{8}/.test(input)) return null;
  try {
    const parsed = KNOWN.parseTransaction({ data: input.toLowerCase() });
    if (!parsed) return null;
    const args = parsed.fragment.inputs.map((param, i) => ({
      name: param.name,
      type: param.format('sighash'),
      value: argumentJson(parsed.args[i], param),
    }));
    const account = accountMethod(parsed.selector);
    if (account && !account.singleCall) {
      const calls = decodeAccountCalls(input).map((c) => ({ target: c.target, value: c.value.toString(), data: c.data }));
      const scalars = args.filter((a) => !a.type.endsWith(']') && a.type !== 'bytes');
      return { method: parsed.name, decodedInput: [...scalars, { name: 'calls', type: CALLS_TYPE, value: calls }] };
    }
    if (parsed.name === 'multiSend') {
      const type = '(uint8,address,uint256,bytes)[]';
      return {
        method: parsed.name,
        decodedInput: [
          {
            name: 'transactions',
            type,
            value: multiSendTransactions(String(parsed.args[0])).map((t) => ({ ...t, value: t.value.toString() })),
          },
        ],
      };
    }
    return { method: parsed.name, decodedInput: args };
  } catch {
    return null;
  }
}
