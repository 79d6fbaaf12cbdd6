/**
 * The calls an op's callData asks its account to make: `execute`, every `executeBatch` variant,
 * ERC-7579 `execute(mode, executionCalldata)` (and Safe7579's launchpad `setupSafe` carrying one),
 * Kernel v2, Safe 4337 module, Biconomy v2, and the v0.7 `executeUserOp` wrapper. An unknown selector yields no calls (the op is kept regardless).
 * Read straight from the hex (hexAbi.ts): this runs for every op.
 */
import { AbiReadError, HexReader, argumentsOf } from './hexAbi.js';

export type AccountCall = { target: string; value: bigint; data: string };

/** IAccountExecute.executeUserOp(PackedUserOperation,bytes32): the account reads callData[4:] itself. */
export const EXECUTE_USER_OP_SELECTOR = '0x8dd7712f';

/**
 * Coinbase Smart Wallet's executeWithoutChainIdValidation(bytes[]): its calls are the account's
 * calls to itself (owner changes, replayed on every chain).
 */
export const SELF_CALLS_SELECTOR = '0x2c2abd1e';

/** `account` is the op's sender: the target of layouts that call the account itself. */
type Decoder = (r: HexReader, account: string | null) => AccountCall[];

/** (address target, uint256 value, bytes data, …) at the head of the arguments. */
const single: Decoder = (r) => [{ target: r.address(0), value: r.uint(32), data: r.bytes(0, 64) }];

/** (address[] targets, uint256[] values, bytes[] datas): an empty value array means all zero. */
const parallelArrays: Decoder = (r) => {
  const targets = r.array(0, 0);
  const values = r.array(0, 32);
  const datas = r.array(0, 64);
  return Array.from({ length: targets.length }, (_, i) => ({
    target: r.address(targets.start + i * 32),
    value: values.length === 0 ? 0n : r.uint(values.start + i * 32),
    data: r.bytes(datas.start, datas.start + i * 32),
  }));
};

/** One (address target, uint256 value, bytes data) struct, the only argument. */
const executionStruct: Decoder = (r) => {
  const p = r.index(0);
  return [{ target: r.address(p), value: r.uint(p + 32), data: r.bytes(p, p + 64) }];
};

/** (address,uint256,bytes)[] whose head word is at `headOffset` relative to `base`. */
const callStructs = (r: HexReader, base: number, headOffset: number): AccountCall[] => {
  const list = r.array(base, headOffset);
  return Array.from({ length: list.length }, (_, i) => {
    const p = r.dynamicItem(list.start, i);
    return { target: r.address(p), value: r.uint(p + 32), data: r.bytes(p, p + 64) };
  });
};

/** MultiSend.multiSend(bytes transactions) / MultiSendCallOnly: Safe's batch, reached by DELEGATECALL. */
export const MULTI_SEND_SELECTOR = '0x8d80ff0a';
const DELEGATECALL = 1n;

/** One transaction of MultiSend's packed list. */
export type MultiSendTransaction = AccountCall & { operation: number };

/**
 * MultiSend's packed transactions: operation(1) ‖ to(20) ‖ value(32) ‖ dataLength(32) ‖ data,
 * repeated. Throws AbiReadError when the list runs past its end.
 * @see https://github.com/safe-global/safe-smart-account/blob/v1.4.1/contracts/libraries/MultiSend.sol
 */
export function multiSendTransactions(packed: string): MultiSendTransaction[] {
  const hex = packed.slice(2).toLowerCase();
  const out: MultiSendTransaction[] = [];
  for (let at = 0; at < hex.length;) {
    if (at + 170 > hex.length) throw new AbiReadError('multiSend transaction header runs past the end');
    const end = at + 170 + Number(BigInt(`0x${hex.slice(at + 106, at + 170)}`)) * 2;
    if (!Number.isSafeInteger(end) || end > hex.length) throw new AbiReadError('multiSend transaction data runs past the end');
    out.push({
      operation: Number.parseInt(hex.slice(at, at + 2), 16),
      target: `0x${hex.slice(at + 2, at + 42)}`,
      value: BigInt(`0x${hex.slice(at + 42, at + 106)}`),
      data: `0x${hex.slice(at + 170, end)}`,
    });
    at = end;
  }
  return out;
}

/**
 * The calls a DELEGATECALL makes the account make: a MultiSend (or MultiSendCallOnly) list's
 * packed transactions; for any other code, the delegatecall itself.
 */
function delegatecallCalls(call: AccountCall): AccountCall[] {
  if (!call.data.startsWith(MULTI_SEND_SELECTOR)) return [call];
  try {
    return multiSendTransactions(argumentsOf(call.data).bytes(0, 0)).map(({ target, value, data }) => ({ target, value, data }));
  } catch {
    return [call]; // not a well-formed MultiSend list: the delegatecall itself is what the op asked for
  }
}

/**
 * Safe's (address to, uint256 value, bytes data, uint8 operation). A batch is a DELEGATECALL into
 * MultiSend (or MultiSendCallOnly), whose packed transactions are the calls the account makes
 * (what permissionless' toSafeSmartAccount sends for several calls); anything else is the one call.
 */
const safeCall: Decoder = (r) => {
  const call = { target: r.address(0), value: r.uint(32), data: r.bytes(0, 64) };
  return r.uint(96) === DELEGATECALL ? delegatecallCalls(call) : [call];
};

/**
 * ERC-7579 execute(bytes32 mode, bytes executionCalldata): byte 0 of `mode` is the call type.
 * 0x00 single = target(20) ‖ value(32) ‖ data (packed); 0x01 batch = abi.encode((address,uint256,bytes)[]);
 * 0xff delegatecall = target(20) ‖ data (no value), a MultiSend list unfolded into its transactions
 * as for Safe. @see https://eips.ethereum.org/EIPS/eip-7579
 */
const erc7579: Decoder = (r) => {
  const callType = r.word(0).slice(0, 2);
  const hex = r.bytes(0, 32).slice(2);
  if (callType === '00') {
    if (hex.length < 104) return [];
    return [{ target: `0x${hex.slice(0, 40)}`, value: BigInt(`0x${hex.slice(40, 104)}`), data: `0x${hex.slice(104)}` }];
  }
  if (callType === '01') return callStructs(new HexReader(hex), 0, 0);
  if (callType === 'ff') {
    if (hex.length < 40) return [];
    return delegatecallCalls({ target: `0x${hex.slice(0, 40)}`, value: 0n, data: `0x${hex.slice(40)}` });
  }
  return [];
};

/**
 * Safe7579Launchpad.setupSafe(InitData): a Safe7579 account's first op, run while the Safe proxy
 * still points at the launchpad. It sets the Safe up with the Safe7579 adapter, then runs
 * InitData.callData — an ERC-7579 execute(mode, executionCalldata) — as the account: those are the
 * op's calls. InitData = (singleton, owners, threshold, setupTo, setupData, safe7579, validators,
 * callData), callData its eighth field.
 * @see https://github.com/rhinestonewtf/safe7579/blob/main/src/Safe7579Launchpad.sol
 */
const safe7579Setup: Decoder = (r, account) => {
  const initData = r.index(0);
  return decodeAccountCalls(r.bytes(initData, initData + 7 * 32), account);
};

/**
 * Selector → the method (its signature, argument names as the reference accounts spell them) and
 * the layout of its calls; the comment above each entry names the accounts that use it.
 */
const METHODS = new Map<string, { family: string; signature: string; decode: Decoder }>([
  // SimpleAccount, LightAccount, Coinbase, v0.8 BaseAccount
  ['0xb61d27f6', { family: 'SimpleAccount-style', signature: 'execute(address dest, uint256 value, bytes func)', decode: single }],
  // SimpleAccount v0.6, LightAccount v1: no values
  [
    '0x18dfb3c7',
    {
      family: 'SimpleAccount-style',
      signature: 'executeBatch(address[] dest, bytes[] func)',
      decode: (r) => {
        const targets = r.array(0, 0);
        const datas = r.array(0, 32);
        return Array.from({ length: targets.length }, (_, i) => ({
          target: r.address(targets.start + i * 32),
          value: 0n,
          data: r.bytes(datas.start, datas.start + i * 32),
        }));
      },
    },
  ],
  // SimpleAccount v0.7, LightAccount v2
  [
    '0x47e1da2a',
    { family: 'SimpleAccount-style', signature: 'executeBatch(address[] dest, uint256[] value, bytes[] func)', decode: parallelArrays },
  ],
  // v0.8 BaseAccount, Coinbase
  [
    '0x34fcd5be',
    {
      family: 'SimpleAccount-style',
      signature: 'executeBatch((address target, uint256 value, bytes data)[] calls)',
      decode: (r) => callStructs(r, 0, 0),
    },
  ],
  // ERC-7579 (Kernel v3, Nexus, Safe7579)
  ['0xe9ae5c53', { family: 'ERC-7579', signature: 'execute(bytes32 mode, bytes executionCalldata)', decode: erc7579 }],
  // Safe7579's launchpad (its first op)
  [
    '0xd9ed0e8f',
    {
      family: 'ERC-7579',
      signature:
        'setupSafe((address singleton, address[] owners, uint256 threshold, address setupTo, bytes setupData, address safe7579, (address module, bytes initData)[] validators, bytes callData) initData)',
      decode: safe7579Setup,
    },
  ],
  // Kernel v2
  ['0x51945447', { family: 'Kernel v2', signature: 'execute(address to, uint256 value, bytes data, uint8 operation)', decode: single }],
  // Safe 4337 module
  ['0x7bb37428', { family: 'Safe', signature: 'executeUserOp(address to, uint256 value, bytes data, uint8 operation)', decode: safeCall }],
  [
    '0x541d63c8',
    { family: 'Safe', signature: 'executeUserOpWithErrorString(address to, uint256 value, bytes data, uint8 operation)', decode: safeCall },
  ],
  // Biconomy v2
  ['0x0000189a', { family: 'Biconomy v2', signature: 'execute_ncC(address dest, uint256 value, bytes func)', decode: single }],
  [
    '0x00004680',
    { family: 'Biconomy v2', signature: 'executeBatch_y6U(address[] dest, uint256[] value, bytes[] func)', decode: parallelArrays },
  ],
  // Older accounts (Blockscout's list)
  ['0x9e5d4c49', { family: 'other', signature: 'executeCall(address dest, uint256 value, bytes func)', decode: single }],
  ['0x80c5c7d0', { family: 'other', signature: 'execFromEntryPoint(address dest, uint256 value, bytes func)', decode: single }],
  ['0x70641a22', { family: 'other', signature: 'execTransactionFromEntrypoint(address to, uint256 value, bytes data)', decode: single }],
  // Ambire (also its EIP-7702 account)
  [
    '0xabc5345e',
    {
      family: 'Ambire',
      signature: 'executeBySender((address to, uint256 value, bytes data)[] calls)',
      decode: (r) => callStructs(r, 0, 0),
    },
  ],
  // MetaMask's DeleGators (DeleGatorCore): one Execution struct, what @metamask/smart-accounts-kit
  // sends for a single call (a batch goes through ERC-7579 execute(mode, data))
  [
    '0x5c1c6dcd',
    {
      family: 'MetaMask DeleGator',
      signature: 'execute((address target, uint256 value, bytes callData) execution)',
      decode: executionStruct,
    },
  ],
  // Coinbase Smart Wallet: every entry is a call of the account to itself (owner changes replayed across chains)
  [
    SELF_CALLS_SELECTOR,
    {
      family: 'Coinbase Smart Wallet',
      signature: 'executeWithoutChainIdValidation(bytes[] calls)',
      decode: (r, account) => {
        if (!account) return [];
        const datas = r.array(0, 0);
        return Array.from({ length: datas.length }, (_, i) => ({
          target: account,
          value: 0n,
          data: r.bytes(datas.start, datas.start + i * 32),
        }));
      },
    },
  ],
]);

/**
 * The kind of account whose method `callData` calls (the family of implementations that share the
 * method: "Safe", "ERC-7579", "SimpleAccount-style"…), or null for an unknown selector. A guess from
 * the calldata alone, for people reading a list of ops; the calls' decoding does not depend on it.
 */
export function accountFamily(callData: string): string | null {
  let input = callData.toLowerCase();
  if (input.startsWith(EXECUTE_USER_OP_SELECTOR)) input = `0x${input.slice(10)}`;
  return METHODS.get(input.slice(0, 10))?.family ?? null;
}

/**
 * The account method `selector` names: its signature, and whether its arguments are one call
 * (target, value, data, …) rather than a list or a packed encoding of calls.
 */
export function accountMethod(selector: string): { signature: string; singleCall: boolean } | undefined {
  const method = METHODS.get(selector.toLowerCase());
  // Safe's arguments are one call even when that call is a MultiSend batch (decodeCall shows it nested).
  return method && { signature: method.signature, singleCall: [single, safeCall, executionStruct].includes(method.decode) };
}

/** Every account method's signature (selectors are checked against them in the tests). */
export const ACCOUNT_METHOD_SELECTORS: ReadonlyArray<[selector: string, signature: string]> = [...METHODS].map(([s, m]) => [
  s,
  m.signature,
]);

/**
 * The account calls in `callData`; [] for an unknown selector or undecodable arguments. `account`
 * (the op's sender) is needed by layouts whose calls go to the account itself.
 */
export function decodeAccountCalls(callData: string, account: string | null = null): AccountCall[] {
  let input = callData.toLowerCase();
  // executeUserOp(op, hash): what the account runs is the rest of its own callData.
  if (input.startsWith(EXECUTE_USER_OP_SELECTOR)) input = `0x${input.slice(10)}`;
  const method = METHODS.get(input.slice(0, 10));
  if (!method) return [];
  try {
    return method.decode(argumentsOf(input), account?.toLowerCase() ?? null);
  } catch {
    return [];
  }
}
