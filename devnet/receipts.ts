/**
 * Records a mined block into the ground truth from its receipts, checking on the way that the chain
 * did what the devnet meant: every submitted op appears exactly once, under the hash we computed,
 * in the bundle we put it in, with the expected success, revert data, deployment and transfers.
 * Any difference throws: a ground truth that disagrees with its own chain is worse than none.
 */
import { AbiCoder, dataSlice, getAddress } from 'ethers';
import type { RpcLog, MinedBlock, RpcReceipt } from './mining.js';
import type { SignedOp } from './ops.js';
import type { LocalSigner } from './signer.js';
import { truthOpFields, type GroundTruth, type TruthTransfer, type TruthUserOp } from './truth.js';
import type { EpVersion } from './userop.js';
import { TOPICS, ZERO_ADDRESS } from '../shared/chain/constants.js';

export type SignedBundle = { bundleIndex: number; version: EpVersion; entryPoint: string; beneficiary: string; ops: SignedOp[] };
export type SignedTx = { bundler: LocalSigner; bundles: SignedBundle[] };
export type SentTx = SignedTx & { hash: string };

const abi = AbiCoder.defaultAbiCoder();
const topicAddress = (t: string | undefined): string => getAddress(dataSlice(t ?? '0x', 12)).toLowerCase();

export function recordBlock(truth: GroundTruth, block: MinedBlock, txs: SentTx[], tokens: Set<string>): void {
  const receipts = new Map(block.receipts.map((r) => [r.transactionHash, r]));
  for (const tx of txs) {
    const receipt = receipts.get(tx.hash);
    if (!receipt) throw new Error(`bundle tx ${tx.hash} not in block ${block.number}`);
    if (receipt.status !== '0x1')
      throw new Error(`bundle tx ${tx.hash} reverted in block ${block.number} (a FailedOp: the devnet built an invalid op)`);
    recordTx(truth, { block, tx, receipt, tokens });
  }
}

function recordTx(
  truth: GroundTruth,
  { block, tx, receipt, tokens }: { block: MinedBlock; tx: SentTx; receipt: RpcReceipt; tokens: Set<string> },
): void {
  const logs = receipt.logs;
  const fee = (BigInt(receipt.gasUsed) * BigInt(receipt.effectiveGasPrice)).toString();
  const bundler = receipt.from.toLowerCase();
  const expected = tx.bundles.flatMap((b) => b.ops.map((o) => o.hash));
  const seen = logs.filter((l) => l.topics[0] === TOPICS.userOperationEvent).map((l) => l.topics[1]);
  if (seen.join() !== expected.join()) {
    throw new Error(
      `tx ${tx.hash}: UserOperationEvents ${seen.length} [${seen.join(', ')}] differ from the ${expected.length} ops sent [${expected.join(', ')}]`,
    );
  }

  let cursor = 0;
  for (const bundle of tx.bundles) {
    const before = logs.findIndex(
      (l, i) => i >= cursor && l.topics[0] === TOPICS.beforeExecution && l.address.toLowerCase() === bundle.entryPoint,
    );
    if (before < 0) throw new Error(`tx ${tx.hash}: no BeforeExecution for bundle ${bundle.bundleIndex}`);
    let windowStart = before + 1;
    for (const signed of bundle.ops) {
      const eventAt = logs.findIndex(
        (l, i) => i >= windowStart && l.topics[0] === TOPICS.userOperationEvent && l.topics[1] === signed.hash,
      );
      const execution = logs.slice(windowStart, eventAt);
      const op = recordOp(truth, { block, tx, bundle, signed, bundler, event: logs[eventAt]!, execution, allLogs: logs, tokens });
      truth.userOps.push(op);
      windowStart = eventAt + 1;
    }
    cursor = windowStart;
    truth.bundles.push({
      transactionHash: tx.hash,
      bundleIndex: bundle.bundleIndex,
      blockNumber: block.number,
      blockTime: block.timestamp,
      bundler,
      beneficiary: bundle.beneficiary.toLowerCase(),
      entryPoint: bundle.entryPoint,
      userOpHashes: bundle.ops.map((o) => o.hash),
      success: true,
      transactionFee: fee,
    });
  }
}

type OpInput = {
  block: MinedBlock;
  tx: SentTx;
  bundle: SignedBundle;
  signed: SignedOp;
  bundler: string;
  event: RpcLog;
  /** Logs between the previous op's UserOperationEvent (or BeforeExecution) and this op's. */
  execution: RpcLog[];
  allLogs: RpcLog[];
  tokens: Set<string>;
};

function recordOp(truth: GroundTruth, input: OpInput): TruthUserOp {
  const { block, tx, bundle, signed, event } = input;
  const { op, action } = signed;
  const fail = (what: string): never => {
    throw new Error(`op ${signed.hash} (${signed.version} ${action.kind}, tx ${tx.hash}): ${what}`);
  };
  const [nonce, success, actualGasCost, actualGasUsed] = abi.decode(['uint256', 'bool', 'uint256', 'uint256'], event.data) as unknown as [
    bigint,
    boolean,
    bigint,
    bigint,
  ];
  const paymaster = topicAddress(event.topics[3]);
  if (topicAddress(event.topics[2]) !== op.sender || nonce !== op.nonce) fail('sender/nonce differ in UserOperationEvent');
  if ((paymaster === ZERO_ADDRESS ? null : paymaster) !== signed.paymaster) fail(`paymaster ${paymaster} unexpected`);
  if (success !== (action.expectedRevert === undefined)) fail(`success=${success} unexpected`);

  const reasonLog = input.execution.find((l) => l.topics[0] === TOPICS.userOperationRevertReason && l.topics[1] === signed.hash);
  const revertReason = reasonLog ? (abi.decode(['uint256', 'bytes'], reasonLog.data)[1] as string).toLowerCase() : null;
  const expectedReason = action.expectedRevert === undefined || action.expectedRevert === '0x' ? null : action.expectedRevert.toLowerCase();
  if (revertReason !== expectedReason) fail(`revert reason ${revertReason} instead of ${expectedReason}`);

  const deployed = input.allLogs.find((l) => l.topics[0] === TOPICS.accountDeployed && l.topics[1] === signed.hash);
  if (Boolean(deployed) !== (signed.factory !== null)) fail(`AccountDeployed ${deployed ? 'present' : 'missing'}`);
  if (deployed && signed.factory) {
    const [factory] = abi.decode(['address', 'address'], deployed.data) as unknown as [string, string];
    if (factory.toLowerCase() !== signed.factory || topicAddress(deployed.topics[2]) !== op.sender) fail('AccountDeployed fields differ');
    truth.accounts.push({
      address: op.sender,
      factory: signed.factory,
      userOpHash: signed.hash,
      transactionHash: tx.hash,
      blockNumber: block.number,
      blockTime: block.timestamp,
    });
  }

  if (success) truth.transfers.push(...matchTransfers(signed, input, fail));
  else if (input.execution.some((l) => input.tokens.has(l.address.toLowerCase()))) fail('token logs from a reverted op');

  return {
    userOpHash: signed.hash,
    sender: op.sender,
    nonce: op.nonce.toString(),
    entryPoint: signed.entryPoint,
    entryPointVersion: signed.version,
    paymaster: signed.paymaster,
    factory: signed.factory,
    success,
    revertReason,
    actualGasCost: actualGasCost.toString(),
    actualGasUsed: actualGasUsed.toString(),
    transactionHash: tx.hash,
    blockNumber: block.number,
    blockTime: block.timestamp,
    bundleIndex: bundle.bundleIndex,
    logIndex: Number(event.logIndex),
    bundler: input.bundler,
    beneficiary: bundle.beneficiary.toLowerCase(),
    ...truthOpFields(op),
    calls: action.calls.map((c) => ({ target: c.target.toLowerCase(), value: c.value.toString(), data: c.data.toLowerCase() })),
  };
}

/** Pairs the op's intended token transfers, in order, with the token logs of its execution window. */
function matchTransfers(signed: SignedOp, { execution, tokens, tx }: OpInput, fail: (what: string) => never): TruthTransfer[] {
  const tokenLogs = execution.filter(
    (l) => tokens.has(l.address.toLowerCase()) && (l.topics[0] === TOPICS.transfer || l.topics[0] === TOPICS.transferSingle),
  );
  const intents = signed.action.calls.flatMap((c) => c.transfers);
  const out: TruthTransfer[] = [];
  let next = 0;
  for (const t of intents) {
    let logIndex: number | null = null;
    if (t.standard !== 'NATIVE') {
      const log = tokenLogs[next++];
      if (!log) return fail(`missing ${t.standard} transfer log`);
      const got = decodeTransferLog(log);
      const want = {
        token: t.token,
        from: t.from.toLowerCase(),
        to: t.to.toLowerCase(),
        value: t.value.toString(),
        tokenId: t.tokenId?.toString() ?? null,
      };
      if (JSON.stringify(got) !== JSON.stringify(want)) fail(`transfer log ${JSON.stringify(got)} differs from ${JSON.stringify(want)}`);
      logIndex = Number(log.logIndex);
    }
    out.push({
      userOpHash: signed.hash,
      standard: t.standard,
      token: t.token?.toLowerCase() ?? null,
      from: t.from.toLowerCase(),
      to: t.to.toLowerCase(),
      value: t.value.toString(),
      tokenId: t.tokenId?.toString() ?? null,
      transactionHash: tx.hash,
      logIndex,
    });
  }
  if (next !== tokenLogs.length) fail(`${tokenLogs.length - next} unexpected transfer log(s)`);
  return out;
}

/** ERC-20 Transfer (3 topics), ERC-721 Transfer (4 topics: tokenId indexed), ERC-1155 TransferSingle. */
export function decodeTransferLog(l: RpcLog): { token: string; from: string; to: string; value: string; tokenId: string | null } {
  const token = l.address.toLowerCase();
  if (l.topics[0] === TOPICS.transferSingle) {
    const [tokenId, value] = abi.decode(['uint256', 'uint256'], l.data) as unknown as [bigint, bigint];
    return { token, from: topicAddress(l.topics[2]), to: topicAddress(l.topics[3]), value: value.toString(), tokenId: tokenId.toString() };
  }
  if (l.topics.length === 4)
    return { token, from: topicAddress(l.topics[1]), to: topicAddress(l.topics[2]), value: '1', tokenId: BigInt(l.topics[3]!).toString() };
  return { token, from: topicAddress(l.topics[1]), to: topicAddress(l.topics[2]), value: BigInt(l.data).toString(), tokenId: null };
}
