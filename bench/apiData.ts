/**
 * Synthetic ERC-4337 history for the API benchmark, written through the indexer's own persistence
 * (persistBatch: the same rows, aggregates and cursor as indexing a chain), without a chain.
 * Shapes follow mainnet-like traffic: 40 ops per block in 4 bundle transactions, one account per
 * 20 ops, a few dozen bundlers, paymasters and factories with skewed popularity, an ERC-20 transfer
 * in half of the ops, blocks spread over about a year so daily metrics have a year of days.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../shared/db/client.js';
import * as indexerState from '../shared/db/tables/indexerState.js';
import type { TransactionLog } from '../shared/db/tables/logs.js';
import { emptyBatch, persistBatch, type DecodedBatch, type DecodedUserOp } from '../indexer/index.js';
import { ENTRY_POINT_V07 } from '../indexer/decode/abi.js';
import { decoderFor } from '../indexer/decode/entryPointDecoder.js';
import { CANONICAL_ENTRYPOINTS, TOPICS } from '../shared/chain/constants.js';

/**
 * The bundle's handleOps calldata as a bundler sends it (the ops' own bytes are read back from it,
 * at each op's `op_at`); sets each op's offset there.
 */
function handleOpsInput(ops: DecodedUserOp[], beneficiary: string): string {
  const structs = ops.map((o) => [
    o.sender,
    o.nonce,
    o.initCode,
    o.callData,
    o.accountGasLimits,
    o.preVerificationGas,
    o.gasFees,
    o.paymasterAndData,
    o.signature,
  ]);
  const input = ENTRY_POINT_V07.encodeFunctionData('handleOps', [structs, beneficiary]).toLowerCase();
  decoderFor('v0.7')
    .decodeHandleOps(input)!
    .ops.forEach((c, i) => (ops[i]!.opAt = c.structAt + 4));
  return input;
}

export const BENCH_CHAIN_ID = 31337;
const OPS_PER_BUNDLE = 10;
const BUNDLES_PER_BLOCK = 4;
const OPS_PER_BLOCK = OPS_PER_BUNDLE * BUNDLES_PER_BLOCK;
const OPS_PER_ACCOUNT = 20;
const BLOCK_SECONDS = 1260; // 25,000 blocks (1M ops) ≈ 365 days
const GENESIS_TIME = Math.floor(Date.UTC(2025, 0, 1) / 1000);
const ENTRY_POINT = CANONICAL_ENTRYPOINTS['v0.7'];
const TRANSFER = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const BEFORE_EXECUTION = '0xbb47ee3e183a558b1a2ff0874b079f3fc5478b7454eacf2bfc5af2ff5878f972';

const hex = (bytes: number) => `0x${randomBytes(bytes).toString('hex')}`;
const word = (value: bigint | number | string) => BigInt(value).toString(16).padStart(64, '0');
const addressOf = (kind: number, i: number) => `0x${kind.toString(16).padStart(8, '0')}${i.toString(16).padStart(32, '0')}`;

/** Deterministic skew: index i of n is picked with weight ~1/(i+1). */
function skewed(n: number, r: number): number {
  return Math.min(n - 1, Math.floor(Math.exp(r * Math.log(n + 1)) - 1));
}

export const bundlerOf = (i: number) => addressOf(1, i);
export const paymasterOf = (i: number) => addressOf(2, i);
export const factoryOf = (i: number) => addressOf(3, i);
export const tokenOf = (i: number) => addressOf(4, i);
export const accountOf = (i: number) => addressOf(5, i);
const recipientOf = (i: number) => addressOf(6, i);

export type BenchSample = { userOpHashes: string[]; senders: string[] };

/** A tiny seeded PRNG (mulberry32): the same layout for the same block numbers. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function buildBatch(fromBlock: number, toBlock: number, sample: BenchSample): DecodedBatch {
  const batch = emptyBatch(BENCH_CHAIN_ID, fromBlock, toBlock);
  if (fromBlock === 1) {
    batch.tokenMetadata = Array.from({ length: 50 }, (_, i) => ({
      address: tokenOf(i),
      standard: 'ERC20' as const,
      name: `Token ${i}`,
      symbol: `TK${i}`,
      decimals: 18,
    }));
    batch.deposits = Array.from({ length: 100 }, (_, i) => ({
      blockNumber: 1,
      logIndex: 10_000 + i,
      txHash: hex(32),
      entryPoint: ENTRY_POINT,
      account: paymasterOf(i),
      event: 'Deposited' as const,
      amount: null,
      totalDeposit: 10n ** 20n,
    }));
  }
  for (let block = fromBlock; block <= toBlock; block++) {
    const random = rng(block);
    const blockHash = `0x${word(block + 1)}`;
    const blockTime = GENESIS_TIME + block * BLOCK_SECONDS;
    batch.headers.push({ number: block, hash: blockHash, parentHash: `0x${word(block)}`, timestamp: blockTime });
    let logIndex = 0;
    for (let b = 0; b < BUNDLES_PER_BLOCK; b++) {
      const txHash = hex(32);
      const bundler = bundlerOf(skewed(30, random()));
      const ops: DecodedUserOp[] = [];
      const parties = new Set([bundler]);
      const firstLogIndex = logIndex++;
      const txLogs: TransactionLog[] = [{ address: ENTRY_POINT, topics: [BEFORE_EXECUTION], data: '0x' }];
      for (let i = 0; i < OPS_PER_BUNDLE; i++) {
        const n = (block - 1) * OPS_PER_BLOCK + b * OPS_PER_BUNDLE + i;
        const accountIndex = Math.floor(random() * Math.max(1, n / OPS_PER_ACCOUNT));
        const deploys = n % OPS_PER_ACCOUNT === 0;
        const sender = accountOf(deploys ? n / OPS_PER_ACCOUNT : accountIndex);
        const paymaster = random() < 0.6 ? paymasterOf(skewed(100, random())) : null;
        const token = tokenOf(skewed(50, random()));
        const recipient = recipientOf(Math.floor(random() * 5000));
        const amount = BigInt(Math.floor(random() * 1e9)) * 10n ** 9n;
        const inner = `0xa9059cbb${word(recipient)}${word(amount)}`;
        const callData = `0xb61d27f6${word(token)}${word(0)}${word(96)}${word(68)}${inner.slice(2)}${'0'.repeat(56)}`;
        const userOpHash = hex(32);
        const cost = BigInt(Math.floor(random() * 1e6) + 100_000) * 10n ** 9n;
        const opLogFrom = logIndex;
        const transfers = random() < 0.5;
        if (transfers) {
          txLogs.push({ address: token, topics: [TRANSFER, `0x${word(sender)}`, `0x${word(recipient)}`], data: `0x${word(amount)}` });
          batch.transfers.push({
            txHash,
            logIndex,
            batchIndex: 0,
            blockNumber: block,
            blockTime,
            userOpHash,
            standard: 'ERC20',
            token,
            from: sender,
            to: recipient,
            value: amount,
            tokenId: null,
          });
          logIndex++;
        }
        const eventLog = logIndex++;
        txLogs.push({
          address: ENTRY_POINT,
          topics: [TOPICS.userOperationEvent, userOpHash, `0x${word(sender)}`, `0x${word(paymaster ?? 0)}`],
          data: `0x${word(n)}${word(1)}${word(cost)}${word(150_000)}`,
        });
        ops.push({
          userOpHash,
          entryPoint: ENTRY_POINT,
          entryPointVersion: 'v0.7',
          sender,
          paymaster,
          nonce: BigInt(n),
          success: true,
          actualGasCost: cost,
          actualGasUsed: 150_000n,
          failure: null,
          revertReason: null,
          revertMessage: null,
          blockNumber: block,
          blockHash,
          blockTime,
          txHash,
          txIndex: b,
          bundleIndex: 0,
          opIndex: i,
          opAt: null,
          logIndex: eventLog,
          execLogFrom: opLogFrom,
          execLogTo: eventLog,
          bundler,
          beneficiary: bundler,
          factory: deploys ? factoryOf(skewed(20, random())) : null,
          deployedLogIndex: null,
          aggregator: null,
          initCode: deploys ? hex(88) : '0x',
          callData,
          signature: hex(65),
          paymasterAndData: paymaster ? `${paymaster}${'0'.repeat(64)}` : '0x',
          callGasLimit: 100_000n,
          verificationGasLimit: 200_000n,
          preVerificationGas: 50_000n,
          maxFeePerGas: 3_000_000_000n,
          maxPriorityFeePerGas: 1_000_000_000n,
          paymasterVerificationGasLimit: paymaster ? 60_000n : null,
          paymasterPostOpGasLimit: paymaster ? 10_000n : null,
          accountGasLimits: `0x${'0'.repeat(64)}`,
          gasFees: `0x${'0'.repeat(64)}`,
          decodeStatus: 'ok',
          calls: [{ target: token, value: 0n, data: inner }],
          target: token,
          eip7702: false,
          paymasterSignature: null,
        });
        for (const p of [sender, token, ...(transfers ? [recipient] : [])]) parties.add(p);
        // Enough hashes that the cache-miss scenario never asks for one twice.
        if (sample.userOpHashes.length < 250_000 && random() < 0.25) sample.userOpHashes.push(userOpHash);
        if (deploys && sample.senders.length < 50_000) sample.senders.push(sender);
      }
      const input = handleOpsInput(ops, bundler);
      const gasUsed = 1_600_000n;
      batch.bundleTxs.push({
        txHash,
        blockNumber: block,
        blockHash,
        blockTime,
        txIndex: b,
        from: bundler,
        to: ENTRY_POINT,
        input,
        status: true,
        gasUsed,
        effectiveGasPrice: 2_000_000_000n,
        fee: gasUsed * 2_000_000_000n,
        l1Fee: null,
        firstLogIndex,
        logs: txLogs,
        cumulativeGasUsed: gasUsed * BigInt(b + 1),
        type: 2,
        receiptRest: null,
      });
      batch.bundles.push({
        txHash,
        bundleIndex: 0,
        blockNumber: block,
        blockTime,
        entryPoint: ENTRY_POINT,
        entryPointVersion: 'v0.7',
        bundler,
        beneficiary: bundler,
        aggregated: false,
        opsCount: ops.length,
        opsFailed: 0,
        actualGasCostSum: ops.reduce((s, o) => s + o.actualGasCost, 0n),
        feeShare: gasUsed * 2_000_000_000n,
      });
      batch.userOps.push(...ops);
      // As the indexer writes them: not an op's sender or bundler (user_ops answers those).
      for (const op of ops) {
        parties.delete(op.sender);
        parties.delete(op.bundler);
      }
      for (const address of parties) batch.addressTxs.push({ address, blockNumber: block, txIndex: b });
    }
  }
  return batch;
}

/**
 * Writes blocks until `totalOps` ops are stored (resuming where a previous call stopped).
 * Returns the blocks written and a sample of hashes and senders to query.
 */
export async function loadUserOps(db: Db, totalOps: number, sample: BenchSample, onProgress?: (ops: number) => void): Promise<void> {
  await indexerState.insertIfMissing(db, { chainId: BENCH_CHAIN_ID, network: 'devnet', startBlock: 1 });
  const lastBlock = Math.ceil(totalOps / OPS_PER_BLOCK);
  const BLOCKS_PER_BATCH = 100;
  for (;;) {
    const cursor = await indexerState.findCursor(db, BENCH_CHAIN_ID);
    const from = (cursor?.indexedBlock ?? 0) + 1;
    if (from > lastBlock) return;
    const to = Math.min(lastBlock, from + BLOCKS_PER_BATCH - 1);
    await persistBatch(db, buildBatch(from, to, sample), {
      headBlock: lastBlock,
      keepHeadersFrom: to - 100,
      backfillComplete: to === lastBlock,
    });
    onProgress?.(to * OPS_PER_BLOCK);
  }
}
