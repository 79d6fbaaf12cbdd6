/**
 * Smart-account families as the simulated chain's ops use them: which EntryPoint each runs on, how
 * it encodes its calls into an op's callData, how its factory is called from initCode, and its
 * nonce key. Encodings follow the reference implementations (the selectors opscan decodes in
 * shared/calldata/accountCalls.ts): SimpleAccount v0.6/v0.7/v0.8, LightAccount v1/v2, Kernel v2,
 * ERC-7579 `execute(mode, executionCalldata)` (Kernel v3, Nexus, Safe7579), and the Safe 4337
 * module's `executeUserOp` (a batch is a DELEGATECALL into MultiSend).
 */
import { AbiCoder, Interface } from 'ethers';
import { address, array, bytes, encodeCall, encodeTuple, tuple, uint, word, type AbiValue } from './abiEncode.js';
import type { EpVersion } from '../devnet/userop.js';

export type Call = { target: string; value: bigint; data: string };

export type Family = {
  name: string;
  version: EpVersion;
  /** Whether a batch of several calls can be sent, and whether a batch may carry values. */
  batches: boolean;
  batchValues: boolean;
  /** Nonce key of the account (ERC-7579 accounts put their validator in it). */
  keyed: boolean;
  encode(calls: Call[]): string;
  /** The factory's calldata (initCode after the factory address). */
  factoryData(owner: string, salt: bigint): string;
};

const abi = AbiCoder.defaultAbiCoder();

const simple06 = new Interface([
  'function execute(address dest,uint256 value,bytes func)',
  'function executeBatch(address[] dest,bytes[] func)',
]);
const simple07 = new Interface([
  'function execute(address dest,uint256 value,bytes func)',
  'function executeBatch(address[] dest,uint256[] value,bytes[] func)',
]);
const simple08 = new Interface([
  'function execute(address target,uint256 value,bytes data)',
  'function executeBatch((address target,uint256 value,bytes data)[] calls)',
]);
const kernel2 = new Interface(['function execute(address to,uint256 value,bytes data,uint8 operation)']);
const safeModule = new Interface(['function executeUserOp(address to,uint256 value,bytes data,uint8 operation)']);
const multiSend = new Interface(['function multiSend(bytes transactions)']);
const erc7579 = new Interface(['function execute(bytes32 mode,bytes executionCalldata)']);
const factories = new Interface([
  'function createAccount(address owner,uint256 salt)',
  'function createProxyWithNonce(address _singleton,bytes initializer,uint256 saltNonce)',
]);
const kernel2Factory = new Interface(['function createAccount(address _implementation,bytes _data,uint256 _index)']);
const bytesSaltFactory = new Interface(['function createAccount(bytes data,bytes32 salt)']);

/** Safe v1.4.1 MultiSendCallOnly and singleton, Kernel v2.1 implementation (their mainnet addresses). */
const MULTI_SEND = '0x9641d764fc13c8b624c04430c7356c1c7c8102e2';
const SAFE_SINGLETON = '0x41675c099f32341bf84bfc5382af534df5c7461a';
const KERNEL_V2_IMPLEMENTATION = '0x0da6a956b9488ed4dd761e59f52fdc6c8068e6b5';

const single = (calls: Call[]): Call => {
  if (calls.length !== 1) throw new Error('this call form takes exactly one call');
  return calls[0]!;
};

const selector = (iface: Interface, name: string): string => iface.getFunction(name)!.selector;
const SEL = {
  execute: selector(simple06, 'execute'),
  batch06: selector(simple06, 'executeBatch'),
  batch07: selector(simple07, 'executeBatch'),
  batch08: selector(simple08, 'executeBatch'),
  kernel2: selector(kernel2, 'execute'),
  safe: selector(safeModule, 'executeUserOp'),
  multiSend: selector(multiSend, 'multiSend'),
  erc7579: selector(erc7579, 'execute'),
};

const callTuple = (c: Call): AbiValue => tuple(address(c.target), uint(c.value), bytes(c.data));

/** SimpleAccount and LightAccount of each version (LightAccount v1/v2 share v0.6/v0.7's methods). */
const simpleStyle = (name: string, version: EpVersion): Family => ({
  name,
  version,
  batches: true,
  batchValues: version !== 'v0.6',
  keyed: false,
  encode(calls) {
    if (calls.length === 1) {
      const c = calls[0]!;
      return encodeCall(SEL.execute, [address(c.target), uint(c.value), bytes(c.data)]);
    }
    const targets = array(calls.map((c) => address(c.target)));
    const datas = array(calls.map((c) => bytes(c.data)));
    if (version === 'v0.6') return encodeCall(SEL.batch06, [targets, datas]);
    if (version === 'v0.7') {
      // An all-zero value list is sent empty (SimpleAccount v0.7 reads that as zeros).
      const values = calls.some((c) => c.value !== 0n) ? calls.map((c) => uint(c.value)) : [];
      return encodeCall(SEL.batch07, [targets, array(values), datas]);
    }
    return encodeCall(SEL.batch08, [array(calls.map(callTuple))]);
  },
  factoryData: (owner, salt) => factories.encodeFunctionData('createAccount', [owner, salt]),
});

/** ERC-7579 mode word: byte 0 the call type (0x00 single, 0x01 batch), the rest default. */
const modeWord = (batch: boolean): AbiValue => word(`${batch ? '01' : '00'}${'0'.repeat(62)}`);

const erc7579Family = (name: string, version: EpVersion, factory: Interface): Family => ({
  name,
  version,
  batches: true,
  batchValues: true,
  keyed: true,
  encode(calls) {
    if (calls.length === 1) {
      // Single: target(20) ‖ value(32) ‖ data, packed.
      const c = calls[0]!;
      return encodeCall(SEL.erc7579, [
        modeWord(false),
        bytes(`0x${c.target.slice(2)}${c.value.toString(16).padStart(64, '0')}${c.data.slice(2)}`),
      ]);
    }
    return encodeCall(SEL.erc7579, [modeWord(true), bytes(`0x${encodeTuple([array(calls.map(callTuple))])}`)]);
  },
  factoryData: (owner, salt) =>
    factory.encodeFunctionData('createAccount', [abi.encode(['address'], [owner]), abi.encode(['uint256'], [salt])]),
});

const safeFamily = (name: string, version: EpVersion): Family => ({
  name,
  version,
  batches: true,
  batchValues: true,
  keyed: false,
  encode(calls) {
    if (calls.length === 1) {
      const c = calls[0]!;
      return encodeCall(SEL.safe, [address(c.target), uint(c.value), bytes(c.data), uint(0)]);
    }
    // MultiSend's packed list: operation(1) ‖ to(20) ‖ value(32) ‖ dataLength(32) ‖ data.
    const packed = calls
      .map(
        (c) =>
          `00${c.target.slice(2)}${c.value.toString(16).padStart(64, '0')}${((c.data.length - 2) / 2).toString(16).padStart(64, '0')}${c.data.slice(2)}`,
      )
      .join('');
    return encodeCall(SEL.safe, [address(MULTI_SEND), uint(0), bytes(encodeCall(SEL.multiSend, [bytes(`0x${packed}`)])), uint(1)]);
  },
  factoryData: (owner, salt) =>
    factories.encodeFunctionData('createProxyWithNonce', [SAFE_SINGLETON, abi.encode(['address[]', 'uint256'], [[owner], 1]), salt]),
});

const kernelV2: Family = {
  name: 'kernel-v2',
  version: 'v0.6',
  batches: false,
  batchValues: false,
  keyed: false,
  encode(calls) {
    const c = single(calls);
    return encodeCall(SEL.kernel2, [address(c.target), uint(c.value), bytes(c.data), uint(0)]);
  },
  factoryData: (owner, salt) =>
    kernel2Factory.encodeFunctionData('createAccount', [KERNEL_V2_IMPLEMENTATION, abi.encode(['address'], [owner]), salt]),
};

/** The families of each EntryPoint version with their weights within it. */
export const FAMILIES: Readonly<Record<EpVersion, ReadonlyArray<[Family, number]>>> = {
  'v0.6': [
    [simpleStyle('simple-v0.6', 'v0.6'), 0.35],
    [simpleStyle('light-v1', 'v0.6'), 0.2],
    [kernelV2, 0.2],
    [safeFamily('safe-v0.6', 'v0.6'), 0.25],
  ],
  'v0.7': [
    [simpleStyle('simple-v0.7', 'v0.7'), 0.25],
    [simpleStyle('light-v2', 'v0.7'), 0.15],
    [erc7579Family('kernel-v3', 'v0.7', bytesSaltFactory), 0.2],
    [erc7579Family('nexus', 'v0.7', bytesSaltFactory), 0.15],
    [erc7579Family('safe7579', 'v0.7', bytesSaltFactory), 0.05],
    [safeFamily('safe-v0.7', 'v0.7'), 0.2],
  ],
  'v0.8': [
    [simpleStyle('simple-v0.8', 'v0.8'), 0.6],
    [erc7579Family('kernel-v3.3', 'v0.8', bytesSaltFactory), 0.4],
  ],
};

/** Every family, in a fixed order: a family's index there names its factory. */
export const ALL_FAMILIES: readonly Family[] = Object.values(FAMILIES).flatMap((list) => list.map(([f]) => f));
