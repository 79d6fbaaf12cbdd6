/**
 * Reads what the devnet's chain itself says, independently of the generator's bookkeeping: the
 * EntryPoint and token logs, the bundle transactions and their handleOps calldata, block times.
 * The devnet tests compare the ground truth against this view.
 */
import {
  AbiCoder,
  Interface,
  JsonRpcProvider,
  dataSlice,
  getAddress,
  type Log,
  type TransactionReceipt,
  type TransactionResponse,
} from 'ethers';
import { createRequire } from 'node:module';
import type { GroundTruth } from '../../devnet/index.js';
import { TOPICS, ZERO_ADDRESS } from '../../shared/chain/constants.js';

const require = createRequire(import.meta.url);
export const entryPointAbi = {
  'v0.6': new Interface((require('ep06/artifacts/EntryPoint.json') as { abi: [] }).abi),
  'v0.7': new Interface((require('ep07/artifacts/EntryPoint.json') as { abi: [] }).abi),
  'v0.8': new Interface((require('ep08/artifacts/EntryPoint.json') as { abi: [] }).abi),
} as const;
export type Version = keyof typeof entryPointAbi;

export const abi = AbiCoder.defaultAbiCoder();
export const topicAddress = (t: string | undefined): string => getAddress(dataSlice(t ?? '0x', 12)).toLowerCase();

export type ChainView = {
  provider: JsonRpcProvider;
  /** EntryPoint logs (UserOperationEvent, AccountDeployed, UserOperationRevertReason), chain order. */
  entryPointLogs: Log[];
  /** Transfer / TransferSingle logs of the devnet's tokens, chain order. */
  tokenLogs: Log[];
  blockTimes: Map<number, number>;
  blockHashes: Map<number, string>;
  transactions: Map<string, TransactionResponse>;
  receipts: Map<string, TransactionReceipt>;
  versionOf: Map<string, Version>;
};

export async function readChain(rpcUrl: string, truth: GroundTruth): Promise<ChainView> {
  const provider = new JsonRpcProvider(rpcUrl, undefined, { staticNetwork: true, batchMaxCount: 100 });
  const versionOf = new Map(Object.entries(truth.entryPoints).map(([v, a]) => [a, v as Version]));
  const tokens = ['erc20.usd6', 'erc20.dai18', 'erc721', 'erc1155'].map((k) => truth.contracts[k]!);
  const [entryPointLogs, tokenLogs, head] = await Promise.all([
    provider.getLogs({
      fromBlock: 0,
      toBlock: 'latest',
      address: [...versionOf.keys()],
      topics: [[TOPICS.userOperationEvent, TOPICS.accountDeployed, TOPICS.userOperationRevertReason]],
    }),
    provider.getLogs({ fromBlock: 0, toBlock: 'latest', address: tokens, topics: [[TOPICS.transfer, TOPICS.transferSingle]] }),
    provider.getBlockNumber(),
  ]);
  const blocks = await Promise.all(Array.from({ length: head + 1 }, (_, n) => provider.getBlock(n)));
  const txHashes = [...new Set(entryPointLogs.map((l) => l.transactionHash))];
  const txs = await Promise.all(txHashes.map((h) => provider.getTransaction(h)));
  const receipts = await Promise.all(txHashes.map((h) => provider.getTransactionReceipt(h)));
  return {
    provider,
    entryPointLogs,
    tokenLogs,
    blockTimes: new Map(blocks.map((b) => [b!.number, b!.timestamp])),
    blockHashes: new Map(blocks.map((b) => [b!.number, b!.hash!])),
    transactions: new Map(txs.map((t) => [t!.hash, t!])),
    receipts: new Map(receipts.map((r) => [r!.hash, r!])),
    versionOf,
  };
}

/** A decoded UserOperationEvent. */
export function decodeUserOperationEvent(l: Log): {
  userOpHash: string;
  sender: string;
  paymaster: string | null;
  nonce: string;
  success: boolean;
  actualGasCost: string;
  actualGasUsed: string;
} {
  const [nonce, success, cost, used] = abi.decode(['uint256', 'bool', 'uint256', 'uint256'], l.data);
  const paymaster = topicAddress(l.topics[3]);
  return {
    userOpHash: l.topics[1]!,
    sender: topicAddress(l.topics[2]),
    paymaster: paymaster === ZERO_ADDRESS ? null : paymaster,
    nonce: String(nonce),
    success: Boolean(success),
    actualGasCost: String(cost),
    actualGasUsed: String(used),
  };
}

const accountCalls = new Interface([
  'function execute(address,uint256,bytes)',
  'function executeBatch(address[],bytes[])',
  'function executeBatch(address[],uint256[],bytes[])',
  'function executeBatch((address,uint256,bytes)[])',
]);

/** Decodes execute / the three executeBatch shapes by selector, as an indexer would. */
export function decodeAccountCalls(callData: string): Array<{ target: string; value: string; data: string }> {
  const tx = accountCalls.parseTransaction({ data: callData });
  if (!tx) return [];
  const a = tx.args;
  const call = (target: unknown, value: unknown, data: unknown): { target: string; value: string; data: string } => ({
    target: String(target).toLowerCase(),
    value: String(value),
    data: String(data).toLowerCase(),
  });
  switch (tx.signature) {
    case 'execute(address,uint256,bytes)':
      return [call(a[0], a[1], a[2])];
    case 'executeBatch(address[],bytes[])':
      return (a[0] as string[]).map((t, i) => call(t, 0, (a[1] as string[])[i]));
    case 'executeBatch(address[],uint256[],bytes[])': {
      const values = [...(a[1] as bigint[])]; // an empty value array means all zero
      return (a[0] as string[]).map((t, i) => call(t, values[i] ?? 0n, (a[2] as string[])[i]));
    }
    default:
      return (a[0] as Array<[string, bigint, string]>).map(([t, v, d]) => call(t, v, d));
  }
}

const multicall = new Interface([
  'function aggregate((address target, bytes data)[] calls)',
  'function aggregateMasked((address target, bytes data)[] calls, bytes1 mask)',
]);

/** BundleMulticall's calls as it forwards them: aggregateMasked's data XOR-ed back with its mask. */
function multicallCalls(data: string): Array<{ target: string; data: string }> {
  const parsed = multicall.parseTransaction({ data })!;
  const mask = parsed.name === 'aggregateMasked' ? Number(parsed.args[1]) : 0;
  return (parsed.args[0] as Array<[string, string]>).map(([target, inner]) => ({
    target: target.toLowerCase(),
    data: `0x${Buffer.from(Buffer.from(inner.slice(2), 'hex').map((b) => b ^ mask)).toString('hex')}`,
  }));
}

/** The handleOps calls a bundle transaction makes: direct, or through the devnet's BundleMulticall. */
export function handleOpsCalls(
  tx: TransactionResponse,
  versionOf: Map<string, Version>,
): Array<{ entryPoint: string; version: Version; ops: Record<string, unknown>[]; beneficiary: string }> {
  const to = tx.to!.toLowerCase();
  const inner = versionOf.has(to) ? [{ target: to, data: tx.data }] : multicallCalls(tx.data);
  return inner.map(({ target, data }) => {
    const version = versionOf.get(target)!;
    const [ops, beneficiary] = entryPointAbi[version].decodeFunctionData('handleOps', data);
    return {
      entryPoint: target,
      version,
      ops: (ops as Array<{ toObject(): Record<string, unknown> }>).map((o) => o.toObject()),
      beneficiary: String(beneficiary).toLowerCase(),
    };
  });
}

/** Unpacks v0.7+ packed gas fields to the v0.6 names (high 128 bits ‖ low 128 bits). */
export function unpackedGas(op: Record<string, unknown>, version: Version): Record<string, string> {
  if (version === 'v0.6') {
    return Object.fromEntries(
      ['callGasLimit', 'verificationGasLimit', 'preVerificationGas', 'maxFeePerGas', 'maxPriorityFeePerGas'].map((k) => [k, String(op[k])]),
    );
  }
  const split = (word: unknown): [string, string] => {
    const n = BigInt(String(word));
    return [String(n >> 128n), String(n & ((1n << 128n) - 1n))];
  };
  const [verificationGasLimit, callGasLimit] = split(op.accountGasLimits);
  const [maxPriorityFeePerGas, maxFeePerGas] = split(op.gasFees);
  return { callGasLimit, verificationGasLimit, preVerificationGas: String(op.preVerificationGas), maxFeePerGas, maxPriorityFeePerGas };
}
