/**
 * Ground truth ↔ chain comparisons. Each returns the differences it found (empty = consistent), so
 * a failing test shows every mismatch at once.
 */
import type { Interface } from 'ethers';
import {
  abi,
  entryPointAbi,
  decodeAccountCalls,
  decodeUserOperationEvent,
  handleOpsCalls,
  topicAddress,
  unpackedGas,
  type ChainView,
} from './chain-view.js';
import { computeDays, type GroundTruth } from '../../devnet/index.js';
import { TOPICS, ZERO_ADDRESS } from '../../shared/chain/constants.js';

/** Every UserOperationEvent ↔ exactly one truth op with the same fields, and vice versa. */
export function checkUserOperationEvents(view: ChainView, truth: GroundTruth): string[] {
  const problems: string[] = [];
  const byHash = new Map(truth.userOps.map((o) => [o.userOpHash, o]));
  if (byHash.size !== truth.userOps.length) problems.push('duplicate userOpHash in truth');
  const events = view.entryPointLogs.filter((l) => l.topics[0] === TOPICS.userOperationEvent);
  const seen = new Set<string>();
  for (const l of events) {
    const e = decodeUserOperationEvent(l);
    const op = byHash.get(e.userOpHash);
    if (!op) {
      problems.push(`event ${e.userOpHash} has no op in truth`);
      continue;
    }
    if (seen.has(e.userOpHash)) problems.push(`event ${e.userOpHash} emitted twice`);
    seen.add(e.userOpHash);
    const tx = view.transactions.get(l.transactionHash)!;
    const want = {
      ...e,
      entryPoint: l.address.toLowerCase(),
      entryPointVersion: view.versionOf.get(l.address.toLowerCase()),
      transactionHash: l.transactionHash,
      blockNumber: l.blockNumber,
      blockTime: view.blockTimes.get(l.blockNumber),
      logIndex: l.index,
      bundler: tx.from.toLowerCase(),
    };
    const got = Object.fromEntries(Object.keys(want).map((k) => [k, op[k as keyof typeof op]]));
    if (JSON.stringify(got) !== JSON.stringify(want))
      problems.push(`op ${e.userOpHash}: truth ${JSON.stringify(got)} ≠ chain ${JSON.stringify(want)}`);
  }
  for (const op of truth.userOps) if (!seen.has(op.userOpHash)) problems.push(`truth op ${op.userOpHash} has no UserOperationEvent`);
  return problems;
}

/** Bundles and op fields ↔ the handleOps calldata of each bundle transaction; hashes ↔ getUserOpHash. */
export async function checkBundleCalldata(view: ChainView, truth: GroundTruth): Promise<string[]> {
  const problems: string[] = [];
  const ops = new Map(truth.userOps.map((o) => [o.userOpHash, o]));
  const hashQueries: Array<{ expect: string; to: string; data: string }> = [];
  const txHashes = new Set(truth.bundles.map((b) => b.transactionHash));
  if (txHashes.size !== view.transactions.size) problems.push(`${view.transactions.size} bundle txs on chain, ${txHashes.size} in truth`);
  for (const hash of txHashes) {
    const tx = view.transactions.get(hash);
    if (!tx) {
      problems.push(`bundle tx ${hash} not on chain`);
      continue;
    }
    const calls = handleOpsCalls(tx, view.versionOf);
    const receipt = view.receipts.get(hash)!;
    const fee = String(receipt.gasUsed * receipt.gasPrice);
    const bundles = truth.bundles.filter((b) => b.transactionHash === hash).sort((a, b) => a.bundleIndex - b.bundleIndex);
    if (bundles.length !== calls.length) problems.push(`tx ${hash}: ${calls.length} handleOps calls, ${bundles.length} bundles in truth`);
    calls.forEach((call, i) => {
      const b = bundles[i];
      const header = {
        bundleIndex: i,
        entryPoint: call.entryPoint,
        beneficiary: call.beneficiary,
        bundler: tx.from.toLowerCase(),
        blockNumber: receipt.blockNumber,
        blockTime: view.blockTimes.get(receipt.blockNumber),
        success: receipt.status === 1,
        transactionFee: fee,
      };
      if (
        !b ||
        JSON.stringify(header) !== JSON.stringify(Object.fromEntries(Object.keys(header).map((k) => [k, b[k as keyof typeof b]])))
      ) {
        problems.push(`tx ${hash} bundle ${i}: header differs`);
        return;
      }
      if (b.userOpHashes.length !== call.ops.length)
        problems.push(`tx ${hash} bundle ${i}: ${call.ops.length} ops in calldata, ${b.userOpHashes.length} in truth`);
      call.ops.forEach((raw, j) => {
        const op = ops.get(b.userOpHashes[j]!);
        if (!op) return problems.push(`bundle op ${b.userOpHashes[j]} missing from userOps`);
        const want = {
          sender: String(raw.sender).toLowerCase(),
          nonce: String(raw.nonce),
          initCode: raw.initCode,
          callData: raw.callData,
          paymasterAndData: raw.paymasterAndData,
          signature: raw.signature,
          ...unpackedGas(raw, call.version),
          factory: raw.initCode === '0x' ? null : String(raw.initCode).slice(0, 42),
          paymaster: raw.paymasterAndData === '0x' ? null : String(raw.paymasterAndData).slice(0, 42),
          beneficiary: call.beneficiary,
          bundleIndex: i,
          calls: decodeAccountCalls(String(raw.callData)),
        };
        const got = Object.fromEntries(Object.keys(want).map((k) => [k, op[k as keyof typeof op]]));
        if (JSON.stringify(got) !== JSON.stringify(want))
          problems.push(`op ${op.userOpHash}: truth ${JSON.stringify(got)} ≠ calldata ${JSON.stringify(want)}`);
        hashQueries.push({
          expect: op.userOpHash,
          to: call.entryPoint,
          data: entryPointInterface(view, call.entryPoint).encodeFunctionData('getUserOpHash', [raw]),
        });
        return undefined;
      });
    });
  }
  const hashes = await Promise.all(hashQueries.map((q) => view.provider.call({ to: q.to, data: q.data })));
  hashQueries.forEach((q, i) => {
    if (hashes[i] !== q.expect) problems.push(`getUserOpHash gives ${hashes[i]} for truth op ${q.expect}`);
  });
  return problems;
}

function entryPointInterface(view: ChainView, address: string): Interface {
  return entryPointAbi[view.versionOf.get(address)!];
}

/** UserOperationRevertReason logs ↔ revertReason (null exactly when there is no such log). */
export function checkRevertReasons(view: ChainView, truth: GroundTruth): string[] {
  const logs = new Map(
    view.entryPointLogs
      .filter((l) => l.topics[0] === TOPICS.userOperationRevertReason)
      .map((l) => [l.topics[1]!, String(abi.decode(['uint256', 'bytes'], l.data)[1])]),
  );
  const problems: string[] = [];
  for (const op of truth.userOps) {
    const onChain = logs.get(op.userOpHash) ?? null;
    if (onChain !== op.revertReason) problems.push(`op ${op.userOpHash}: revertReason ${op.revertReason} ≠ log ${onChain}`);
    if (op.revertReason !== null && op.success) problems.push(`op ${op.userOpHash}: successful op with a revert reason`);
  }
  if (logs.size !== truth.userOps.filter((o) => o.revertReason !== null).length) problems.push('revert reason log count differs');
  return problems;
}

/** AccountDeployed logs ↔ accounts (and the deploying op's factory). */
export function checkAccounts(view: ChainView, truth: GroundTruth): string[] {
  const problems: string[] = [];
  const logs = view.entryPointLogs.filter((l) => l.topics[0] === TOPICS.accountDeployed);
  const onChain = logs.map((l) => ({
    address: topicAddress(l.topics[2]),
    factory: String(abi.decode(['address', 'address'], l.data)[0]).toLowerCase(),
    userOpHash: l.topics[1]!,
    transactionHash: l.transactionHash,
    blockNumber: l.blockNumber,
    blockTime: view.blockTimes.get(l.blockNumber),
  }));
  if (JSON.stringify(onChain) !== JSON.stringify(truth.accounts))
    problems.push(`accounts differ: chain ${onChain.length}, truth ${truth.accounts.length}`);
  const ops = new Map(truth.userOps.map((o) => [o.userOpHash, o]));
  for (const a of truth.accounts) {
    const op = ops.get(a.userOpHash);
    if (!op || op.factory !== a.factory || op.sender !== a.address) problems.push(`account ${a.address}: deploying op differs`);
  }
  if (truth.userOps.filter((o) => o.factory).length !== truth.accounts.length) problems.push('ops with a factory ≠ accounts deployed');
  return problems;
}

/** Token logs inside bundle transactions ↔ non-native transfers; native transfers ↔ call values of successful ops. */
export function checkTransfers(view: ChainView, truth: GroundTruth): string[] {
  const problems: string[] = [];
  const bundleTxs = new Set(truth.bundles.map((b) => b.transactionHash));
  const onChain = view.tokenLogs
    .filter((l) => bundleTxs.has(l.transactionHash))
    .map((l) => {
      const single = l.topics[0] === TOPICS.transferSingle;
      const [tokenId, value] = single
        ? abi.decode(['uint256', 'uint256'], l.data)
        : [l.topics[3] ? BigInt(l.topics[3]) : null, l.topics[3] ? 1n : BigInt(l.data)];
      return {
        standard: single ? 'ERC1155' : l.topics.length === 4 ? 'ERC721' : 'ERC20',
        token: l.address.toLowerCase(),
        from: topicAddress(l.topics[single ? 2 : 1]),
        to: topicAddress(l.topics[single ? 3 : 2]),
        value: String(value),
        tokenId: tokenId === null ? null : String(tokenId),
        transactionHash: l.transactionHash,
        logIndex: l.index,
      };
    });
  const recorded = truth.transfers.filter((t) => t.standard !== 'NATIVE').map(({ userOpHash: _, ...rest }) => rest);
  if (JSON.stringify(onChain) !== JSON.stringify(recorded))
    problems.push(`token transfers differ: chain ${onChain.length}, truth ${recorded.length}`);

  const ops = new Map(truth.userOps.map((o) => [o.userOpHash, o]));
  for (const t of truth.transfers) {
    const op = ops.get(t.userOpHash);
    if (!op || !op.success || op.transactionHash !== t.transactionHash)
      problems.push(`transfer attributed to ${t.userOpHash}, not a successful op of that tx`);
  }
  const native = truth.userOps
    .filter((o) => o.success)
    .flatMap((o) => o.calls.filter((c) => c.value !== '0').map((c) => `${o.userOpHash}:${o.sender}:${c.target}:${c.value}`));
  const recordedNative = truth.transfers.filter((t) => t.standard === 'NATIVE').map((t) => `${t.userOpHash}:${t.from}:${t.to}:${t.value}`);
  if (JSON.stringify(native) !== JSON.stringify(recordedNative))
    problems.push('native transfers differ from the value calls of successful ops');
  if (truth.transfers.some((t) => t.standard === 'NATIVE' && (t.token !== null || t.logIndex !== null || t.tokenId !== null)))
    problems.push('native transfer with token fields');
  if (truth.transfers.some((t) => t.from === ZERO_ADDRESS && t.standard === 'NATIVE')) problems.push('native transfer from zero');
  return problems;
}

/** days ↔ recomputed from the lists, and per-day op counts ↔ UserOperationEvents by block time. */
export function checkDays(view: ChainView, truth: GroundTruth): string[] {
  const problems: string[] = [];
  if (JSON.stringify(computeDays(truth)) !== JSON.stringify(truth.days)) problems.push('days differ from their recomputation');
  const perDay = new Map<number, number>();
  for (const l of view.entryPointLogs.filter((x) => x.topics[0] === TOPICS.userOperationEvent)) {
    const day = Math.floor(view.blockTimes.get(l.blockNumber)! / 86400);
    perDay.set(day, (perDay.get(day) ?? 0) + 1);
  }
  for (const d of truth.days)
    if ((perDay.get(d.day) ?? 0) !== d.userOps)
      problems.push(`day ${d.day}: ${d.userOps} ops in truth, ${perDay.get(d.day) ?? 0} on chain`);
  if (truth.days.reduce((n, d) => n + d.userOps, 0) !== truth.userOps.length) problems.push('day op counts do not sum to the total');
  return problems;
}

export async function allProblems(view: ChainView, truth: GroundTruth): Promise<string[]> {
  return [
    ...checkUserOperationEvents(view, truth),
    ...(await checkBundleCalldata(view, truth)),
    ...checkRevertReasons(view, truth),
    ...checkAccounts(view, truth),
    ...checkTransfers(view, truth),
    ...checkDays(view, truth),
  ];
}
