import { createRequire } from 'node:module';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ErrorFragment, Interface } from 'ethers';
import { storableTextFromUtf8 } from '../shared/chainText.js';
import type { DecodedArgument } from '../shared/models/trace.js';
import { argumentJson } from './knownCalls.js';

/**
 * Decoding of revert data an explorer shows by name: `Error(string)`, `Panic(uint256)` and the custom
 * errors of the contracts opscan ships ABIs for — the EntryPoints and their sample accounts and
 * paymasters (every error of the @account-abstraction/contracts artifacts), the account
 * implementations opscan names, ERC-20/721/1155 tokens and the libraries they build on, and the
 * paymasters it meets. An error that carries the revert data of an inner call as `bytes` (the
 * EntryPoint's `PostOpReverted`, v0.8+ `ExecuteError`, account wrappers, an `Error(string)` whose text
 * is itself revert data) is unwrapped into that inner error. Nothing is guessed: a selector none of
 * these ABIs declares, or data its declaration does not decode, is `unknown` with the bytes.
 */

const ERROR_STRING = '0x08c379a0';
const PANIC = '0x4e487b71';

/** Solidity panic codes. @see https://docs.soliditylang.org/en/latest/control-structures.html#panic-via-assert-and-error-via-require */
export const PANIC_REASONS: Readonly<Record<number, string>> = {
  0x00: 'generic compiler panic',
  0x01: 'assert',
  0x11: 'arithmetic overflow',
  0x12: 'division by zero',
  0x21: 'invalid enum value',
  0x22: 'invalid storage byte array',
  0x31: 'pop on empty array',
  0x32: 'array index out of bounds',
  0x41: 'out of memory',
  0x51: 'call to uninitialised function',
};

/**
 * Custom errors of contracts opscan names whose ABIs are not in an npm package it depends on, as
 * their sources declare them (each signature's selector is what the deployed code reverts with).
 */
const VENDOR_ERRORS = [
  // OpenZeppelin 5 token errors (IERC20Errors, IERC721Errors, IERC1155Errors) and SafeERC20.
  'ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed)',
  'ERC20InsufficientAllowance(address spender, uint256 allowance, uint256 needed)',
  'ERC20InvalidSender(address sender)',
  'ERC20InvalidReceiver(address receiver)',
  'ERC20InvalidApprover(address approver)',
  'ERC20InvalidSpender(address spender)',
  'ERC721InvalidOwner(address owner)',
  'ERC721NonexistentToken(uint256 tokenId)',
  'ERC721IncorrectOwner(address sender, uint256 tokenId, address owner)',
  'ERC721InvalidSender(address sender)',
  'ERC721InvalidReceiver(address receiver)',
  'ERC721InsufficientApproval(address operator, uint256 tokenId)',
  'ERC721InvalidApprover(address approver)',
  'ERC721InvalidOperator(address operator)',
  'ERC1155InsufficientBalance(address sender, uint256 balance, uint256 needed, uint256 tokenId)',
  'ERC1155InvalidSender(address sender)',
  'ERC1155InvalidReceiver(address receiver)',
  'ERC1155MissingApprovalForAll(address operator, address owner)',
  'ERC1155InvalidApprover(address approver)',
  'ERC1155InvalidOperator(address operator)',
  'ERC1155InvalidArrayLength(uint256 idsLength, uint256 valuesLength)',
  'SafeERC20FailedOperation(address token)',
  // Solady's ERC-20 and SafeTransferLib (the paymasters' token transfers).
  'InsufficientBalance()',
  'InsufficientAllowance()',
  'TransferFailed()',
  'TransferFromFailed()',
  'ApproveFailed()',
  'ETHTransferFailed()',
  // OpenZeppelin 5 ERC-7579 accounts.
  'AccountUnauthorized(address sender)',
  'ERC7579UnsupportedCallType(bytes1 callType)',
  'ERC7579UnsupportedExecType(bytes1 execType)',
  'ERC7579MismatchedModuleTypeId(uint256 moduleTypeId, address module)',
  'ERC7579UninstalledModule(uint256 moduleTypeId, address module)',
  'ERC7579AlreadyInstalledModule(uint256 moduleTypeId, address module)',
  'ERC7579UnsupportedModuleType(uint256 moduleTypeId)',
  'ERC7579DecodingError()',
  // Kernel v3.
  'InvalidCaller()',
  'InvalidValidator()',
  'InvalidSelector()',
  'InvalidNonce()',
  'InvalidExecutor()',
  'InvalidFallback()',
  'InvalidCallType()',
  'InvalidModuleType()',
  'InvalidValidationType()',
  'InvalidSignature()',
  'OnlyExecuteUserOp()',
  'EnableNotApproved()',
  'NonceInvalidationError()',
  'ModuleOnUninstallFailed()',
  'ExecutionReverted()',
  // Nexus, Safe's 4337 module and Safe7579.
  'ExecutionFailed()',
  'UnsupportedCallType(bytes1 callType)',
  'UnsupportedExecType(bytes1 execType)',
  'UnsupportedModuleType(uint256 moduleTypeId)',
  'ModuleNotInstalled(uint256 moduleTypeId, address module)',
  'ModuleAlreadyInstalled(uint256 moduleTypeId, address module)',
  'UnauthorizedOperation(address operator)',
  'InvalidEntryPoint()',
  // Coinbase Smart Wallet and Alchemy's LightAccount.
  'Unauthorized()',
  'InvalidNonceKey(uint256 key)',
  'SelectorNotAllowed(bytes4 selector)',
  'InvalidImplementation(address implementation)',
  'NotAuthorized(address caller)',
  'ArrayLengthMismatch()',
  'InvalidSignatureType()',
];

/** Every `error` of the EntryPoint packages' artifacts (EntryPoint, sample accounts, paymasters, the OpenZeppelin code they build on). */
function entryPointPackageErrors(): ErrorFragment[] {
  const require = createRequire(import.meta.url);
  const fragments: ErrorFragment[] = [];
  for (const pkg of ['ep06', 'ep07', 'ep08']) {
    const dir = join(dirname(require.resolve(`${pkg}/package.json`)), 'artifacts');
    for (const file of readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()) {
      const { abi } = require(join(dir, file)) as { abi: Array<{ type: string }> };
      for (const item of abi) if (item.type === 'error') fragments.push(ErrorFragment.from(item));
    }
  }
  return fragments;
}

/** The known errors by selector; one selector may have several declarations (the first that decodes wins). */
const KNOWN = (() => {
  const bySignature = new Map<string, ErrorFragment>();
  for (const fragment of [...entryPointPackageErrors(), ...VENDOR_ERRORS.map((s) => ErrorFragment.from(`error ${s}`))]) {
    if (!bySignature.has(fragment.format('sighash'))) bySignature.set(fragment.format('sighash'), fragment);
  }
  const bySelector = new Map<string, ErrorFragment[]>();
  for (const fragment of bySignature.values()) bySelector.set(fragment.selector, [...(bySelector.get(fragment.selector) ?? []), fragment]);
  return bySelector;
})();

export const knownErrorSignatures = (): string[] => [
  'Error(string)',
  'Panic(uint256)',
  ...[...KNOWN.values()].flat().map((f) => f.format('sighash')),
];

export type RevertKind = 'Error' | 'Panic' | 'custom' | 'empty' | 'unknown';

/** One decoded error: the innermost, after unwrapping (`wrappers` holds the errors around it, outermost first). */
export type DecodedRevert = {
  kind: RevertKind;
  name: string | null;
  message: string | null;
  selector: string | null;
  args: DecodedArgument[] | null;
  /** The error's own bytes (the inner ones once unwrapped). */
  data: string;
  wrappers: Array<{ name: string; selector: string; args: DecodedArgument[] }>;
};

const coder = new Interface([]);

/** The arguments of `data` under `fragment`, or null when they do not decode (exactly: no bytes left over). */
function decodeArgs(fragment: ErrorFragment, data: string): DecodedArgument[] | null {
  try {
    const values = coder.decodeErrorResult(fragment, data);
    // A re-encoding that differs means the data held more than (or other than) these arguments.
    if (coder.encodeErrorResult(fragment, values).toLowerCase() !== data.toLowerCase()) return null;
    return fragment.inputs.map((param, i) => ({ name: param.name, type: param.format('sighash'), value: argumentJson(values[i], param) }));
  } catch {
    return null;
  }
}

const isHexData = (value: unknown): value is string => typeof value === 'string' && /^0x([0-9a-f]{2})*$/.test(value);

/** The text of an argument list: `name=value, …` (bytes and nested values as JSON). */
const argsText = (args: DecodedArgument[]): string =>
  args.map((a) => `${a.name || a.type}=${typeof a.value === 'string' ? a.value : JSON.stringify(a.value)}`).join(', ');

const MAX_DEPTH = 8;

/** The names the known declarations give a `bytes` argument that holds an inner call's revert data. */
const REVERT_DATA_NAMES = new Set(['returnData', 'error', 'inner', 'ret', 'revertData', 'reason', 'result']);

/** Revert data as the innermost error it carries; empty or missing data is `empty`. */
export function decodeRevert(data: string | null, depth = 0): DecodedRevert {
  const bytes = (data ?? '0x').toLowerCase();
  const plain = { wrappers: [], data: bytes };
  if (bytes === '0x') return { ...plain, kind: 'empty', name: null, message: null, selector: null, args: null };
  if (bytes.length < 10) return { ...plain, kind: 'unknown', name: null, message: null, selector: null, args: null };
  const selector = bytes.slice(0, 10);
  if (selector === ERROR_STRING) {
    const raw = rawErrorString(bytes);
    if (raw === null) return { ...plain, kind: 'unknown', name: null, message: null, selector, args: null };
    // `revert(string(returnData))`: text that is not UTF-8 but an inner call's revert data.
    if (!isUtf8(raw) && depth < MAX_DEPTH) {
      const inner = decodeRevert(raw, depth + 1);
      if (inner.kind !== 'unknown' && inner.kind !== 'empty') return wrapped(inner, { name: 'Error', selector, args: [] });
    }
    const message = storableTextFromUtf8(raw);
    return { ...plain, kind: 'Error', name: 'Error', message, selector, args: [{ name: 'reason', type: 'string', value: message }] };
  }
  if (selector === PANIC) {
    const args = decodeArgs(ErrorFragment.from('error Panic(uint256 code)'), bytes);
    if (!args) return { ...plain, kind: 'unknown', name: null, message: null, selector, args: null };
    const code = Number(args[0]!.value);
    const reason = PANIC_REASONS[code] ?? `unknown panic code 0x${code.toString(16)}`;
    return { ...plain, kind: 'Panic', name: 'Panic', message: reason, selector, args };
  }
  for (const fragment of KNOWN.get(selector) ?? []) {
    const args = decodeArgs(fragment, bytes);
    if (!args) continue;
    // An error carrying the revert data of an inner call: that inner error is the answer.
    const inner = depth < MAX_DEPTH ? args.findLast((a) => a.type === 'bytes' && isHexData(a.value)) : undefined;
    const decoded = inner ? decodeRevert(inner.value as string, depth + 1) : null;
    // Bytes that are empty or no error opscan knows are unwrapped only where the declaration calls them revert data.
    const isError = decoded !== null && decoded.kind !== 'unknown' && decoded.kind !== 'empty';
    if (inner && decoded && (isError || REVERT_DATA_NAMES.has(inner.name)))
      return wrapped(decoded, { name: fragment.name, selector, args: args.filter((a) => a !== inner) });
    return { ...plain, kind: 'custom', name: fragment.name, message: `${fragment.name}(${argsText(args)})`, selector, args };
  }
  return { ...plain, kind: 'unknown', name: null, message: null, selector, args: null };
}

function wrapped(inner: DecodedRevert, wrapper: DecodedRevert['wrappers'][number]): DecodedRevert {
  return { ...inner, wrappers: [wrapper, ...inner.wrappers] };
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function isUtf8(hex: string): boolean {
  try {
    strictUtf8.decode(Buffer.from(hex.slice(2), 'hex'));
    return true;
  } catch {
    return false;
  }
}

/** The string bytes of an `Error(string)` read without UTF-8 decoding, or null when the layout is wrong. */
function rawErrorString(data: string): string | null {
  try {
    const [raw] = coder.getAbiCoder().decode(['bytes'], `0x${data.slice(10)}`);
    return String(raw).toLowerCase();
  } catch {
    return null;
  }
}
