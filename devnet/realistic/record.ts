/**
 * Records what the bundler says happened to each op the realistic devnet sent. The bundler's
 * `eth_getUserOperationReceipt` is the second truth, beside the generator's own record of what it
 * asked for: success, gas, logs and the bundle transaction come from the receipt; the op's fields
 * from what the SDK built and signed; block times and the bundle's beneficiary from the chain.
 * Where the two truths disagree (an op meant to succeed that failed, a receipt naming another
 * sender), recording throws: a ground truth that disagrees with itself is worse than none.
 */
import { decodeAbiParameters, decodeFunctionData, keccak256, toBytes, type Address, type Hex } from 'viem';
import { entryPoint06Abi, entryPoint07Abi, toPackedUserOperation, type UserOperation } from 'viem/account-abstraction';
import type { EntryPointVersion } from '../../shared/networks.js';
import type { RpcLog } from '../mining.js';
import { decodeTransferLog } from '../receipts.js';
import type { Rpc } from '../rpc.js';
import { computeDays, type GroundTruth, type TruthTransfer, type TruthUserOp } from '../truth.js';
import type { AccountType, ExecutionMode } from './accounts.js';
import type { PaymasterMode } from './contracts.js';
import type { ModuleChange } from './modules.js';
import { TOPICS } from '../../shared/chain/constants.js';

/** EntryPoint v0.7+: PostOpRevertReason(bytes32 indexed userOpHash, address indexed sender, uint256 nonce, bytes revertReason). */
const POST_OP_REVERT_REASON = keccak256(toBytes('PostOpRevertReason(bytes32,address,uint256,bytes)'));

export type Call = { target: Address; value: bigint; data: Hex };

/** What the generator meant to happen. */
export type ExpectedOutcome = 'success' | 'execution-revert' | 'postop-revert';

/**
 * The error a failing op's calls raise, as the generator asked for it: the kind opscan's diagnosis
 * names, the error's name and its arguments as JSON values (decimal strings, lower-case addresses).
 */
export type FailureIntent = { kind: 'Error' | 'Panic' | 'custom' | 'unknown' | 'empty'; name: string | null; args: string[] | null };

/** eth_getUserOperationReceipt as the bundler answers it (hex quantities). */
export type BundlerReceipt = {
  userOpHash: Hex;
  entryPoint: Address;
  sender: Address;
  nonce: Hex;
  paymaster?: Address;
  actualGasCost: Hex;
  actualGasUsed: Hex;
  success: boolean;
  reason?: Hex;
  /** The op's own logs (its execution). */
  logs: RpcLog[];
  receipt: {
    transactionHash: Hex;
    blockNumber: Hex;
    from: Address;
    to: Address;
    gasUsed: Hex;
    effectiveGasPrice: Hex;
    status: Hex;
    logs: RpcLog[];
  };
};

/** One op as the generator sent it. */
export type SentOp = {
  hash: Hex;
  accountType: AccountType;
  /** The account's implementation, as names.md spells it ("Kernel v3.1"). */
  implementation: string;
  mode: ExecutionMode;
  version: EntryPointVersion;
  entryPoint: Address;
  op: UserOperation;
  calls: Call[];
  paymaster: Address | null;
  paymasterMode: PaymasterMode | null;
  expected: ExpectedOutcome;
  failureIntent: FailureIntent | null;
  eip7702: boolean;
  /** The bundler process(es) it was sent to (two when they compete for it). */
  sentTo: string[];
  /** The ERC-7579 module installs and uninstalls its calls ask for, in order. */
  moduleChanges: ModuleChange[];
};

/** The realistic truth file's entry for an op: the GroundTruth op plus the generator's intent and the bundler's receipt. */
export type RealisticRecord = {
  userOpHash: Hex;
  accountType: AccountType;
  /** The sender's implementation ("SimpleAccount v0.7", "Kernel v3.1", …). */
  implementation: string;
  /** How its callData asks for its calls: one call, a batch, or an ERC-7579 delegatecall. */
  mode: ExecutionMode;
  entryPoint: Address;
  sender: Address;
  calls: Array<{ target: string; value: string; data: string }>;
  paymaster: string | null;
  paymasterMode: PaymasterMode | null;
  factory: string | null;
  expectedOutcome: ExpectedOutcome;
  /** The error it was meant to fail with (null when meant to succeed). */
  expectedFailure: FailureIntent | null;
  eip7702: boolean;
  sentTo: string[];
  /** The ERC-7579 module installs and uninstalls its calls ask for, in order (lower-case addresses). */
  moduleChanges: ModuleChange[];
  /** The paymaster's revert data from PostOpRevertReason (v0.7+; v0.6 emits none). */
  postOpRevertReason: string | null;
  bundlerReceipt: {
    success: boolean;
    actualGasCost: string;
    actualGasUsed: string;
    reason: string | null;
    logs: RpcLog[];
    transactionHash: string;
    blockNumber: number;
    bundler: string;
  };
};

type ChainTx = { hash: Hex; from: Address; to: Address; input: Hex; blockNumber: Hex };

/**
 * Adds the ops of one wave (all included by now) to `truth` and returns their records. Every bundle
 * transaction they landed in must hold exactly ops of this wave.
 */
export async function recordWave(
  chain: Rpc,
  truth: GroundTruth,
  sent: SentOp[],
  receipts: Map<Hex, BundlerReceipt>,
): Promise<RealisticRecord[]> {
  const byTx = new Map<Hex, SentOp[]>();
  for (const s of sent) {
    const r = receipts.get(s.hash)!;
    const list = byTx.get(r.receipt.transactionHash) ?? [];
    list.push(s);
    byTx.set(r.receipt.transactionHash, list);
  }
  const txHashes = [...byTx.keys()];
  const txs = await chain.batch<ChainTx>(txHashes.map((h) => ['eth_getTransactionByHash', [h]]));
  const blockNumbers = [...new Set(txs.map((t) => t.blockNumber))];
  const blocks = await chain.batch<{ timestamp: Hex }>(blockNumbers.map((n) => ['eth_getBlockByNumber', [n, false]]));
  const blockTime = new Map(blockNumbers.map((n, i) => [n, Number(blocks[i]!.timestamp)]));

  const records: RealisticRecord[] = [];
  txs.forEach((tx, t) => {
    const ops = byTx.get(txHashes[t]!)!;
    const first = receipts.get(ops[0]!.hash)!.receipt;
    const fail = (what: string): never => {
      throw new Error(`bundle tx ${tx.hash}: ${what}`);
    };
    if (first.status !== '0x1') fail('reverted');
    const version = ops[0]!.version;
    const entryPoint = tx.to.toLowerCase();
    const { args } = decodeFunctionData({ abi: version === 'v0.6' ? entryPoint06Abi : entryPoint07Abi, data: tx.input });
    if (!args || args.length < 2) fail('is not a handleOps call');
    const beneficiary = (args[1] as Address).toLowerCase();
    const events = first.logs.filter((l) => l.topics[0] === TOPICS.userOperationEvent);
    const inTx = events.map((l) => l.topics[1]!.toLowerCase());
    const ours = new Map(ops.map((o) => [o.hash.toLowerCase(), o]));
    if (inTx.length !== ours.size || inTx.some((h) => !ours.has(h)))
      fail(`holds ops [${inTx.join(', ')}], the bundler's receipts name [${[...ours.keys()].join(', ')}]`);
    const time = blockTime.get(tx.blockNumber)!;
    const blockNumber = Number(tx.blockNumber);
    const bundler = tx.from.toLowerCase();

    // Each op's execution: after BeforeExecution (first op) or the previous op's event, up to its own.
    let windowStart = first.logs.findIndex((l) => l.topics[0] === TOPICS.beforeExecution) + 1;
    if (windowStart === 0) fail('has no BeforeExecution event');
    for (const event of events) {
      const hash = event.topics[1]!.toLowerCase() as Hex;
      const s = ours.get(hash)!;
      const receipt = receipts.get(s.hash)!;
      const eventAt = first.logs.indexOf(event);
      const execution = first.logs.slice(windowStart, eventAt);
      windowStart = eventAt + 1;
      const op = truthOp(s, receipt, { event, execution, allLogs: first.logs, tx, beneficiary, time, blockNumber, bundler });
      truth.userOps.push(op.userOp);
      if (op.account) truth.accounts.push(op.account);
      truth.transfers.push(...op.transfers);
      records.push(op.record);
    }
    truth.bundles.push({
      transactionHash: tx.hash.toLowerCase(),
      bundleIndex: 0,
      blockNumber,
      blockTime: time,
      bundler,
      beneficiary,
      entryPoint,
      userOpHashes: inTx,
      success: true,
      transactionFee: (BigInt(first.gasUsed) * BigInt(first.effectiveGasPrice)).toString(),
    });
  });
  truth.days = computeDays(truth);
  return records;
}

type OpContext = {
  event: RpcLog;
  execution: RpcLog[];
  allLogs: RpcLog[];
  tx: ChainTx;
  beneficiary: string;
  time: number;
  blockNumber: number;
  bundler: string;
};

function truthOp(s: SentOp, receipt: BundlerReceipt, ctx: OpContext) {
  const fail = (what: string): never => {
    throw new Error(`op ${s.hash} (${s.accountType}, tx ${ctx.tx.hash}): ${what}`);
  };
  const op = s.op;
  const sender = op.sender.toLowerCase();
  if (receipt.sender.toLowerCase() !== sender) fail(`the bundler's receipt names sender ${receipt.sender}`);
  if (BigInt(receipt.nonce) !== op.nonce) fail(`the bundler's receipt names nonce ${receipt.nonce}`);
  if (receipt.success !== (s.expected === 'success')) fail(`success=${receipt.success}, expected ${s.expected}`);
  const [, success, actualGasCost, actualGasUsed] = decodeAbiParameters(
    [{ type: 'uint256' }, { type: 'bool' }, { type: 'uint256' }, { type: 'uint256' }],
    ctx.event.data as Hex,
  );
  if (success !== receipt.success || actualGasCost !== BigInt(receipt.actualGasCost) || actualGasUsed !== BigInt(receipt.actualGasUsed))
    fail('the bundler receipt differs from the UserOperationEvent');

  const reasonLog = ctx.execution.find((l) => l.topics[0] === TOPICS.userOperationRevertReason && l.topics[1]?.toLowerCase() === s.hash);
  const revertReason = reasonLog
    ? (decodeAbiParameters([{ type: 'uint256' }, { type: 'bytes' }], reasonLog.data as Hex)[1] as string)
    : null;
  // A revert with no data emits no reason event, unless the account wraps it in an error of its own.
  const maybeEmpty = s.failureIntent?.kind === 'empty';
  if ((s.expected === 'execution-revert') !== (reasonLog !== undefined) && !(maybeEmpty && !reasonLog))
    fail(`UserOperationRevertReason ${reasonLog ? 'present' : 'missing'}`);

  const postOpLog = ctx.execution.find((l) => l.topics[0] === POST_OP_REVERT_REASON && l.topics[1]?.toLowerCase() === s.hash);
  if (postOpLog && s.expected !== 'postop-revert') fail('PostOpRevertReason on an op not meant to make postOp revert');

  const deployedLog = ctx.allLogs.find((l) => l.topics[0] === TOPICS.accountDeployed && l.topics[1]?.toLowerCase() === s.hash);
  const [factory] = deployedLog ? decodeAbiParameters([{ type: 'address' }, { type: 'address' }], deployedLog.data as Hex) : [null];

  const transfers: TruthTransfer[] = [];
  for (const log of ctx.execution) {
    if (log.topics[0] !== TOPICS.transfer && log.topics[0] !== TOPICS.transferSingle) continue;
    const t = decodeTransferLog(log);
    transfers.push({
      userOpHash: s.hash,
      standard: log.topics[0] === TOPICS.transferSingle ? 'ERC1155' : t.tokenId === null ? 'ERC20' : 'ERC721',
      ...t,
      transactionHash: ctx.tx.hash.toLowerCase(),
      logIndex: Number(log.logIndex),
    });
  }
  if (success) {
    for (const c of s.calls) {
      if (c.value === 0n) continue;
      transfers.push({
        userOpHash: s.hash,
        standard: 'NATIVE',
        token: null,
        from: sender,
        to: c.target.toLowerCase(),
        value: c.value.toString(),
        tokenId: null,
        transactionHash: ctx.tx.hash.toLowerCase(),
        logIndex: null,
      });
    }
  }

  const packed = s.version === 'v0.6' ? null : toPackedUserOperation(op);
  const v06 = op as UserOperation<'0.6'>;
  const calls = s.calls.map((c) => ({ target: c.target.toLowerCase(), value: c.value.toString(), data: c.data.toLowerCase() }));
  const userOp: TruthUserOp = {
    userOpHash: s.hash,
    sender,
    nonce: op.nonce.toString(),
    entryPoint: s.entryPoint,
    entryPointVersion: s.version,
    paymaster: s.paymaster,
    factory: factory ? factory.toLowerCase() : null,
    success,
    revertReason: revertReason?.toLowerCase() ?? null,
    actualGasCost: actualGasCost.toString(),
    actualGasUsed: actualGasUsed.toString(),
    transactionHash: ctx.tx.hash.toLowerCase(),
    blockNumber: ctx.blockNumber,
    blockTime: ctx.time,
    bundleIndex: 0,
    logIndex: Number(ctx.event.logIndex),
    bundler: ctx.bundler,
    beneficiary: ctx.beneficiary,
    callData: op.callData.toLowerCase(),
    initCode: (packed ? packed.initCode : (v06.initCode ?? '0x')).toLowerCase(),
    paymasterAndData: (packed ? packed.paymasterAndData : (v06.paymasterAndData ?? '0x')).toLowerCase(),
    signature: op.signature.toLowerCase(),
    callGasLimit: op.callGasLimit.toString(),
    verificationGasLimit: op.verificationGasLimit.toString(),
    preVerificationGas: op.preVerificationGas.toString(),
    maxFeePerGas: op.maxFeePerGas.toString(),
    maxPriorityFeePerGas: op.maxPriorityFeePerGas.toString(),
    calls,
  };
  const account = factory
    ? {
        address: sender,
        factory: factory.toLowerCase(),
        userOpHash: s.hash,
        transactionHash: ctx.tx.hash.toLowerCase(),
        blockNumber: ctx.blockNumber,
        blockTime: ctx.time,
      }
    : null;
  const record: RealisticRecord = {
    userOpHash: s.hash,
    accountType: s.accountType,
    implementation: s.implementation,
    mode: s.mode,
    entryPoint: s.entryPoint,
    sender: sender as Address,
    calls,
    paymaster: s.paymaster,
    paymasterMode: s.paymasterMode,
    factory: userOp.factory,
    expectedOutcome: s.expected,
    // The reverter's caller is the account itself (its custom error names it).
    expectedFailure: s.failureIntent && {
      ...s.failureIntent,
      args: s.failureIntent.args?.map((a) => (a === '<caller>' ? sender : a)) ?? null,
    },
    eip7702: s.eip7702,
    sentTo: s.sentTo,
    moduleChanges: s.moduleChanges.map((c) => ({ ...c, module: c.module.toLowerCase() as Address })),
    postOpRevertReason: postOpLog
      ? (decodeAbiParameters([{ type: 'uint256' }, { type: 'bytes' }], postOpLog.data as Hex)[1] as string).toLowerCase()
      : null,
    bundlerReceipt: {
      success: receipt.success,
      actualGasCost: BigInt(receipt.actualGasCost).toString(),
      actualGasUsed: BigInt(receipt.actualGasUsed).toString(),
      reason: receipt.reason ?? null,
      logs: receipt.logs,
      transactionHash: receipt.receipt.transactionHash.toLowerCase(),
      blockNumber: Number(receipt.receipt.blockNumber),
      bundler: receipt.receipt.from.toLowerCase(),
    },
  };
  return { userOp, account, transfers, record };
}
