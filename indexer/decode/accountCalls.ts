/**
 * The calls an op's callData asks its account to make: `execute`, every `executeBatch` variant,
 * ERC-7579 `execute(mode, executionCalldata)`, Kernel v2, Safe 4337 module, Biconomy v2, and the
 * v0.7 `executeUserOp` wrapper. An unknown selector yields no calls (the op is kept regardless).
 * @see research/indexer.md §1.4 (account "execute" selectors)
 */
import { AbiCoder, Interface, type Result } from 'ethers';

export type AccountCall = { target: string; value: bigint; data: string };

const ACCOUNTS = new Interface([
  'function execute(address target, uint256 value, bytes data)',
  'function executeBatch(address[] targets, bytes[] datas)',
  'function executeBatch(address[] targets, uint256[] values, bytes[] datas)',
  'function executeBatch((address target, uint256 value, bytes data)[] calls)',
  'function execute(bytes32 mode, bytes executionCalldata)',
  'function execute(address to, uint256 value, bytes data, uint8 operation)',
  'function executeUserOp(address to, uint256 value, bytes data, uint8 operation)',
  'function executeUserOpWithErrorString(address to, uint256 value, bytes data, uint8 operation)',
  'function execute_ncC(address to, uint256 value, bytes data)',
  'function executeBatch_y6U(address[] dest, uint256[] value, bytes[] func)',
  'function executeCall(address to, uint256 value, bytes data)',
  'function execFromEntryPoint(address to, uint256 value, bytes data)',
]);

const abi = AbiCoder.defaultAbiCoder();
const sig = (signature: string): string => ACCOUNTS.getFunction(signature)!.selector;

/** IAccountExecute.executeUserOp(PackedUserOperation,bytes32): the account reads callData[4:] itself. */
export const EXECUTE_USER_OP_SELECTOR = '0x8dd7712f';

type Decoder = (args: Result) => AccountCall[];

const single: Decoder = (a) => [{ target: String(a[0]), value: a[1] as bigint, data: String(a[2]) }];

const parallelArrays: Decoder = (a) => {
  const targets = a[0] as string[];
  const values = a[1] as bigint[];
  const datas = a[2] as string[];
  // SimpleAccount v0.7 / LightAccount v2: an empty value array means every value is zero.
  return targets.map((t, i) => ({ target: String(t), value: values.length === 0 ? 0n : (values[i] ?? 0n), data: String(datas[i] ?? '0x') }));
};

const DECODERS = new Map<string, { signature: string; decode: Decoder }>([
  [sig('execute(address,uint256,bytes)'), { signature: 'execute(address,uint256,bytes)', decode: single }],
  [sig('executeBatch(address[],bytes[])'), {
    signature: 'executeBatch(address[],bytes[])',
    decode: (a) => (a[0] as string[]).map((t, i) => ({ target: String(t), value: 0n, data: String((a[1] as string[])[i] ?? '0x') })),
  }],
  [sig('executeBatch(address[],uint256[],bytes[])'), { signature: 'executeBatch(address[],uint256[],bytes[])', decode: parallelArrays }],
  [sig('executeBatch((address,uint256,bytes)[])'), {
    signature: 'executeBatch((address,uint256,bytes)[])',
    decode: (a) => (a[0] as Result[]).map((c) => ({ target: String(c[0]), value: c[1] as bigint, data: String(c[2]) })),
  }],
  [sig('execute(bytes32,bytes)'), { signature: 'execute(bytes32,bytes)', decode: (a) => decodeErc7579(String(a[0]), String(a[1])) }],
  [sig('execute(address,uint256,bytes,uint8)'), { signature: 'execute(address,uint256,bytes,uint8)', decode: single }],
  [sig('executeUserOp(address,uint256,bytes,uint8)'), { signature: 'executeUserOp(address,uint256,bytes,uint8)', decode: single }],
  [sig('executeUserOpWithErrorString(address,uint256,bytes,uint8)'), { signature: 'executeUserOpWithErrorString(address,uint256,bytes,uint8)', decode: single }],
  [sig('execute_ncC(address,uint256,bytes)'), { signature: 'execute_ncC(address,uint256,bytes)', decode: single }],
  [sig('executeBatch_y6U(address[],uint256[],bytes[])'), { signature: 'executeBatch_y6U(address[],uint256[],bytes[])', decode: parallelArrays }],
  [sig('executeCall(address,uint256,bytes)'), { signature: 'executeCall(address,uint256,bytes)', decode: single }],
  [sig('execFromEntryPoint(address,uint256,bytes)'), { signature: 'execFromEntryPoint(address,uint256,bytes)', decode: single }],
]);

/**
 * ERC-7579 execution: byte 0 of `mode` is the call type. 0x00 single = target(20) ‖ value(32) ‖
 * data (packed); 0x01 batch = abi.encode((address,uint256,bytes)[]); 0xff delegatecall =
 * target(20) ‖ data (no value). @see https://eips.ethereum.org/EIPS/eip-7579
 */
function decodeErc7579(mode: string, execution: string): AccountCall[] {
  const callType = mode.slice(2, 4);
  const hex = execution.slice(2);
  if (callType === '00') {
    if (hex.length < 104) return [];
    return [{ target: `0x${hex.slice(0, 40)}`, value: BigInt(`0x${hex.slice(40, 104)}`), data: `0x${hex.slice(104)}` }];
  }
  if (callType === '01') {
    const [calls] = abi.decode(['(address,uint256,bytes)[]'], execution);
    return (calls as Result[]).map((c) => ({ target: String(c[0]), value: c[1] as bigint, data: String(c[2]) }));
  }
  if (callType === 'ff') {
    if (hex.length < 40) return [];
    return [{ target: `0x${hex.slice(0, 40)}`, value: 0n, data: `0x${hex.slice(40)}` }];
  }
  return [];
}

/** The account calls in `callData`; [] for an unknown selector or undecodable arguments. */
export function decodeAccountCalls(callData: string): AccountCall[] {
  let input = callData.toLowerCase();
  // executeUserOp(op, hash): what the account runs is the rest of its own callData.
  if (input.startsWith(EXECUTE_USER_OP_SELECTOR)) input = `0x${input.slice(10)}`;
  const decoder = DECODERS.get(input.slice(0, 10));
  if (!decoder) return [];
  try {
    const args = ACCOUNTS.decodeFunctionData(decoder.signature, input);
    return decoder.decode(args).map((c) => ({ target: c.target.toLowerCase(), value: c.value, data: c.data.toLowerCase() }));
  } catch {
    return [];
  }
}
