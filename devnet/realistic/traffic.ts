/**
 * The mix of ops real chains show, built by the SDKs and sent only through the bundlers'
 * eth_sendUserOperation: account deployments through initCode and through EIP-7702, single calls,
 * batches, ERC-20/721/1155 moves, sponsored and token-paid ops, ops that revert in execution, ops
 * whose paymaster postOp reverts, parallel nonce keys (several ops of one sender in one bundle), and
 * ops sent to both bundlers at once (they compete; one includes it). Ops go out in waves: a wave's
 * ops are sent together (so a bundler packs several into one handleOps) and all included before the
 * next wave is planned.
 */
import {
  concat,
  encodeAbiParameters,
  encodeFunctionData,
  encodePacked,
  http,
  pad,
  parseAbi,
  size,
  toHex,
  type Address,
  type Hex,
  type SignedAuthorization,
} from 'viem';
import { createBundlerClient, formatUserOperationRequest, getUserOperationHash, type UserOperation } from 'viem/account-abstraction';
import { createPimlicoClient } from 'permissionless/clients/pimlico';
import {
  ACCOUNT_KINDS,
  ACCOUNT_TYPES,
  createRealAccount,
  takesParallelNonceKeys,
  type ExecutionMode,
  type RealAccount,
} from './accounts.js';
import type { RpcReceipt } from '../mining.js';
import { decodeTransferLog } from '../receipts.js';
import type { Bundler } from './bundler.js';
import { devnetChain, type PaymasterMode } from './contracts.js';
import { moduleChangeDue, nextModuleChange, type ModuleChange } from './modules.js';
import { approvePaymasterCall, paymasterService } from './paymaster.js';
import {
  recordWave,
  type BundlerReceipt,
  type Call,
  type ExpectedOutcome,
  type FailureIntent,
  type RealisticRecord,
  type SentOp,
} from './record.js';
import type { RealisticDevnet } from './index.js';
import { TOPICS } from '../../shared/chain/constants.js';

const WAVE_SIZE = 8;
const RECEIPT_TIMEOUT_MS = 60_000;
/** How long an op may go without a receipt before its bundlers are asked what became of it. */
const LOOK_AFTER_MS = 15_000;
const ERC20 = parseAbi(['function transfer(address,uint256) returns (bool)', 'function balanceOf(address) view returns (uint256)']);
const ERC721 = parseAbi(['function mint(address,uint256)']);
const ERC1155 = parseAbi(['function mint(address,uint256,uint256)']);
const REVERTER = parseAbi([
  'function fail(string)',
  'function failEmpty()',
  'function failCustom(uint256)',
  'function failUnknown(uint256)',
  'function failPanic(uint256)',
]);
/**
 * How ops meant to revert in execution fail, in turn: a require with a message, a custom error of a
 * declaration explorers ship, a Panic, an inner call of a batch reverting, a revert with no data, and
 * a custom error no explorer knows.
 */
const FAILURE_TURNS = ['require', 'custom', 'panic', 'batch', 'empty', 'unknown'] as const;
type FailureTurn = (typeof FAILURE_TURNS)[number];
const MULTI_SEND = parseAbi(['function multiSend(bytes transactions)']);
const ERC7579_EXECUTE = parseAbi(['function execute(bytes32 mode, bytes executionCalldata)']);
const COINBASE = parseAbi([
  'function addOwnerAddress(address owner)',
  'function executeWithoutChainIdValidation(bytes[] calls)',
  'function getUserOpHashWithoutChainId((address sender, uint256 nonce, bytes initCode, bytes callData, uint256 callGasLimit, uint256 verificationGasLimit, uint256 preVerificationGas, uint256 maxFeePerGas, uint256 maxPriorityFeePerGas, bytes paymasterAndData, bytes signature) userOp) view returns (bytes32)',
]);
/** Coinbase Smart Wallet's REPLAYABLE_NONCE_KEY: the key executeWithoutChainIdValidation ops must use. */
const COINBASE_REPLAYABLE_NONCE_KEY = 8453n;
/** Call type 0xff (delegatecall), exec type 0x00 (revert on failure), no selector or payload. */
const ERC7579_DELEGATECALL_MODE = pad('0xff', { dir: 'right', size: 32 });
const DEAD: Address = '0x000000000000000000000000000000000000dead';

type Intent = {
  account: RealAccount;
  calls: Call[];
  /** How the callData asks for the calls: one call, a batch, or (ERC-7579) a delegatecall. */
  mode: ExecutionMode;
  /** What estimation runs instead when the real calls are meant to fail (a bundler will not estimate a reverting op). */
  estimateWith: Call[] | null;
  paymasterMode: PaymasterMode | null;
  expected: ExpectedOutcome;
  nonceKey: bigint | null;
  bundlers: Bundler[];
  /** The error the op's calls are meant to raise (execution-revert). */
  failure?: FailureIntent;
  /** The ERC-7579 module changes its calls make (none for most ops). */
  moduleChanges?: ModuleChange[];
  /** The EIP-7702 authorization it carries, when another than its account's first op signs (buildAndSend). */
  authorization?: SignedAuthorization;
};

/** Plans, sends and records `ops` more ops on the realistic devnet. */
export async function sendRealisticTraffic(rd: RealisticDevnet, ops: number, onProgress?: (done: number) => void): Promise<void> {
  await syncDeployedWithChain(rd);
  let done = 0;
  while (done < ops) {
    const records = await sendWave(rd, await planWave(rd, Math.min(WAVE_SIZE, ops - done)));
    rd.records.push(...records);
    done += records.length;
    onProgress?.(done);
  }
}

/**
 * One op of `account` making `calls`, paid by the account, sent to the first bundler and waited for;
 * added to the truth like the traffic's, its record returned but kept out of the traffic's
 * (rd.records). `authorization`: the EIP-7702 authorization it carries (none when omitted, unless
 * the account is a 7702 one not yet delegated).
 */
export async function sendOneOp(
  rd: RealisticDevnet,
  account: RealAccount,
  calls: Call[],
  authorization?: SignedAuthorization,
): Promise<RealisticRecord> {
  const [record] = await sendWave(rd, [
    {
      account,
      calls,
      mode: 'single',
      estimateWith: null,
      paymasterMode: null,
      expected: 'success',
      nonceKey: null,
      bundlers: [rd.bundlers[0]!],
      ...(authorization ? { authorization } : {}),
    },
  ]);
  return record!;
}

/** Sends the ops together, waits until each is included, and adds them to the truth. */
async function sendWave(rd: RealisticDevnet, intents: Intent[]): Promise<RealisticRecord[]> {
  const sent = await Promise.all(intents.map((i) => sendOp(rd, i)));
  const receipts = new Map<Hex, BundlerReceipt>();
  await Promise.all(sent.map(async (s) => receipts.set(s.hash, await waitForReceipt(rd, s))));
  const records = await recordWave(rd.devnet.rpc, rd.devnet.truth, sent, receipts);
  for (const s of sent) {
    const account = intents.find((i) => i.account.address === s.op.sender.toLowerCase())!.account;
    account.deployed = true;
    if (s.paymasterMode === 'erc20' && s.expected === 'success') account.approvedPaymaster = true;
  }
  return records;
}

/**
 * Marks as deployed every account the chain has code for. An earlier call that failed mid-wave (a
 * receipt that never came) leaves ops in the bundlers that may land later, deploying or delegating
 * their accounts: an op planned with initCode or an EIP-7702 authorization for such an account is
 * refused ("AA10 sender already constructed"). A 7702 account's code is its delegation designator.
 */
async function syncDeployedWithChain(rd: RealisticDevnet): Promise<void> {
  const unknown = rd.accounts.filter((a) => !a.deployed);
  const codes = await rd.devnet.rpc.batch<Hex>(unknown.map((a) => ['eth_getCode', [a.address, 'latest']]));
  unknown.forEach((a, i) => {
    if (codes[i] !== '0x') a.deployed = true;
  });
}

async function planWave(rd: RealisticDevnet, size: number): Promise<Intent[]> {
  const { rng } = rd;
  const intents: Intent[] = [];
  const used = new Set<string>();
  const fresh: RealAccount[] = [];
  while (intents.length < size) {
    // Round robin over the account types, so even a short run has each of them.
    const type = ACCOUNT_TYPES[rd.opsPlanned++ % ACCOUNT_TYPES.length]!;
    const pool = rd.accounts.filter((a) => a.type === type && !used.has(a.address));
    const modes: readonly ExecutionMode[] = ACCOUNT_KINDS[type].modes;
    // A turn whose mode needs a deployed account (below) takes one when the type has one, so that a
    // short run sends every mode.
    const turnMode = modes[(rd.modeTurns.get(type) ?? 0) % modes.length]!;
    // So does a turn that a deployed modular account's next module change waits for (modules.ts).
    const deployedPool = needsDeployed(turnMode) ? pool.filter((a) => a.deployed) : pool.filter((a) => moduleChangeDue(a, turnMode));
    let account: RealAccount;
    if (deployedPool.length > 0) account = rng.pick(deployedPool);
    else if (pool.length === 0 || rng.chance(0.25)) {
      account = await createRealAccount(
        type,
        { client: rd.operator.public, contracts: rd.contracts, delegationFramework: rd.delegationFramework },
        rd.ownerKey(rd.accounts.length),
        BigInt(rd.accounts.length),
      );
      rd.accounts.push(account);
      fresh.push(account);
    } else account = rng.pick(pool);
    used.add(account.address);
    const bundler = rng.pick(rd.bundlers);
    // Several ops of one sender in one bundle: parallel nonce keys of a deployed account.
    if (account.deployed && takesParallelNonceKeys(type) && rng.chance(0.15) && size - intents.length >= 2) {
      const count = Math.min(size - intents.length, rng.int(2, 3));
      for (let k = 0; k < count; k++)
        intents.push({
          ...planOp(rd, account, 'success', rng.chance(0.35) && modes.includes('batch') ? 'batch' : 'single'),
          nonceKey: BigInt(1000 + rd.nextNonceKey++),
          bundlers: [bundler],
        });
      continue;
    }
    // Each type's execution modes in turn, so a short run sends every one of them; a mode that
    // needs a deployed account waits for one (needsDeployed).
    const turn = rd.modeTurns.get(type) ?? 0;
    let mode: ExecutionMode = modes[turn % modes.length]!;
    if (needsDeployed(mode) && !account.deployed) mode = 'single';
    else rd.modeTurns.set(type, turn + 1);
    const roll = rng.next();
    // Until every failure kind has gone out, and a postOp has reverted, more turns fail: a short run has them all.
    const kindsOwed = rd.failureTurns < FAILURE_TURNS.length;
    const postOpOwed =
      !rd.records.some((r) => r.expectedOutcome === 'postop-revert') && !intents.some((i) => i.expected === 'postop-revert');
    const expected: ExpectedOutcome =
      mode !== 'single' || !account.deployed
        ? 'success'
        : account.approvedPaymaster && postOpOwed
          ? 'postop-revert'
          : roll < (kindsOwed ? 0.5 : 0.1)
            ? 'execution-revert'
            : account.approvedPaymaster && roll < 0.35
              ? 'postop-revert'
              : 'success';
    const competing = rng.chance(0.1);
    intents.push({
      ...withModuleChange(rd, planOp(rd, account, expected, mode)),
      nonceKey: null,
      bundlers: competing ? [bundler, ...rd.bundlers.filter((b) => b !== bundler)] : [bundler],
    });
  }
  await fundAccounts(rd, fresh);
  return intents;
}

/**
 * A delegatecall waits for a deployed account (Safe7579's first op is the launchpad's setupSafe),
 * and so does a Coinbase replayable op (its calls may only be the account's own owner changes).
 */
const needsDeployed = (mode: ExecutionMode): boolean => mode === 'delegatecall' || mode === 'replayable';

function planOp(
  rd: RealisticDevnet,
  account: RealAccount,
  expected: ExpectedOutcome,
  mode: ExecutionMode,
): Omit<Intent, 'nonceKey' | 'bundlers'> {
  const { rng } = rd;
  const version = account.version;
  if (expected === 'postop-revert') {
    // Spends every token the ERC-20 paymaster would charge in postOp (balance read when sent): its
    // token transfer (Solady's SafeTransferLib) fails. v0.6 emits no revert data for a postOp.
    const failure: FailureIntent =
      version === 'v0.6' ? { kind: 'empty', name: null, args: null } : { kind: 'custom', name: 'TransferFromFailed', args: [] };
    return { account, calls: [], mode: 'single', estimateWith: null, paymasterMode: 'erc20', expected, failure };
  }
  if (expected === 'execution-revert') {
    const hasBatch = (ACCOUNT_KINDS[account.type].modes as readonly ExecutionMode[]).includes('batch');
    let turn: FailureTurn = FAILURE_TURNS[rd.failureTurns++ % FAILURE_TURNS.length]!;
    // An account without a batch fails its turn's batch as a require.
    if (turn === 'batch' && !hasBatch) turn = 'require';
    const { call, intent } = failingCall(rd, turn === 'batch' ? 'require' : turn);
    // SimpleAccount v0.6's executeBatch carries no values (planOp's batches).
    const calls =
      turn === 'batch' ? [{ ...randomCall(rd, account), ...(account.type === 'simple-v0.6' ? { value: 0n } : {}) }, call] : [call];
    // An EOA accepts the same calldata, so estimation sees an op of the same shape that succeeds.
    const estimateWith = calls.map((c) => ({ ...c, target: c === call ? (rng.pick(rd.devnet.recipients) as Address) : c.target }));
    const mode: ExecutionMode = turn === 'batch' ? 'batch' : 'single';
    return { account, calls, mode, estimateWith, paymasterMode: rng.chance(0.4) ? 'verifying' : null, expected, failure: intent };
  }
  if (mode === 'replayable') {
    // A Coinbase owner change meant for every chain: the account adds an owner (an address of no one's).
    const newOwner = pad(toHex(rng.int(1, 2 ** 31)), { size: 20 });
    const calls = [
      {
        target: account.address,
        value: 0n,
        data: encodeFunctionData({ abi: COINBASE, functionName: 'addOwnerAddress', args: [newOwner] }),
      },
    ];
    // Only calls to the account itself may be replayed: no approval, so the token only once approved.
    const roll = rng.next();
    const paymasterMode = roll < 0.3 ? 'verifying' : roll < 0.5 && account.approvedPaymaster ? 'erc20' : null;
    return { account, calls, mode, estimateWith: null, paymasterMode, expected: 'success' };
  }
  // A delegatecall runs Safe's MultiSendCallOnly in the account (buildAndSend): its calls are these.
  const count = mode === 'batch' ? rng.int(2, 3) : mode === 'delegatecall' ? rng.int(1, 2) : 1;
  let calls = Array.from({ length: count }, () => randomCall(rd, account));
  // SimpleAccount v0.6's executeBatch(dest[], func[]) carries no values (permissionless drops them
  // without a word): a wallet on it batches value-less calls only.
  if (account.type === 'simple-v0.6' && count > 1) calls = calls.map((c) => ({ ...c, value: 0n }));
  const roll = rng.next();
  const hasBatch = (ACCOUNT_KINDS[account.type].modes as readonly ExecutionMode[]).includes('batch');
  // A single call's turn pays in the token only once approved (the approval would make it a
  // batch), except on an account with no batch, whose approval is then the op's one call.
  const erc20 = mode !== 'single' || account.approvedPaymaster || !hasBatch;
  // An account not yet approved pays in the token more often on a batch turn, so that postOp reverts
  // (which need the approval) come up in a short run too.
  const erc20Share = !account.approvedPaymaster && mode === 'batch' ? 0.8 : 0.5;
  const paymasterMode: PaymasterMode | null = roll < 0.3 ? 'verifying' : roll < erc20Share && erc20 ? 'erc20' : null;
  if (paymasterMode === 'erc20' && !account.approvedPaymaster) {
    if (hasBatch) calls.unshift(approvePaymasterCall(rd.contracts, version));
    else calls = [approvePaymasterCall(rd.contracts, version)];
  }
  return { account, calls, mode, estimateWith: null, paymasterMode, expected };
}

/**
 * The op with its account's next module change when one is due (modules.ts): installs or an
 * uninstall lead a batch's or a delegatecall's calls (MultiSend's calls run as the account, which
 * may call itself); an uninstall is a single turn's one call. Not for several ops of one sender in
 * one bundle, whose order is the bundler's.
 */
function withModuleChange(rd: RealisticDevnet, planned: Omit<Intent, 'nonceKey' | 'bundlers'>): Omit<Intent, 'nonceKey' | 'bundlers'> {
  const change = planned.expected === 'success' ? nextModuleChange(planned.account, planned.mode, rd.contracts) : null;
  if (!change) return planned;
  const calls = planned.mode === 'single' ? change.calls : [...change.calls, ...planned.calls];
  return { ...planned, calls, moduleChanges: change.changes };
}

function randomCall(rd: RealisticDevnet, account: RealAccount): Call {
  const { rng, base } = rd;
  const others = rd.accounts.filter((a) => a.deployed && a.address !== account.address).map((a) => a.address);
  const to = (rng.chance(0.3) && others.length > 0 ? rng.pick(others) : rng.pick(rd.devnet.recipients)) as Address;
  switch (rng.int(0, 4)) {
    case 0:
      return { target: to, value: BigInt(rng.int(1, 1_000_000)) * 1_000_000n, data: '0x' };
    case 1:
      return {
        target: base.erc20Usd6,
        value: 0n,
        data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [to, BigInt(rng.int(1, 5_000_000))] }),
      };
    case 2:
      return {
        target: base.erc721,
        value: 0n,
        data: encodeFunctionData({ abi: ERC721, functionName: 'mint', args: [rng.chance(0.5) ? account.address : to, rd.nextNftId++] }),
      };
    case 3:
      return {
        target: base.erc1155,
        value: 0n,
        data: encodeFunctionData({ abi: ERC1155, functionName: 'mint', args: [to, BigInt(1 + rng.int(0, 4)), BigInt(rng.int(1, 100))] }),
      };
    default:
      // A contract call with value and data: the paymaster token's transfer, paid with 0 ETH.
      return {
        target: base.erc20Dai18,
        value: 0n,
        data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [to, 10n ** 15n * BigInt(rng.int(1, 100))] }),
      };
  }
}

/**
 * The reverter's call for a failure turn, and the error it raises (the record's expected failure:
 * what the generator asked for, the account's own wrapping aside).
 */
function failingCall(rd: RealisticDevnet, turn: Exclude<FailureTurn, 'batch'>): { call: Call; intent: FailureIntent } {
  const n = rd.nextNftId++;
  const call = (data: Hex): Call => ({ target: rd.base.reverter, value: 0n, data });
  switch (turn) {
    case 'require': {
      const reason = `realistic revert ${n}`;
      return {
        call: call(encodeFunctionData({ abi: REVERTER, functionName: 'fail', args: [reason] })),
        intent: { kind: 'Error', name: 'Error', args: [reason] },
      };
    }
    case 'custom':
      // The sender is the account that calls the reverter (filled in when recorded).
      return {
        call: call(encodeFunctionData({ abi: REVERTER, functionName: 'failCustom', args: [n] })),
        intent: { kind: 'custom', name: 'ERC20InsufficientBalance', args: ['<caller>', '0', n.toString()] },
      };
    case 'panic':
      return {
        call: call(encodeFunctionData({ abi: REVERTER, functionName: 'failPanic', args: [n] })),
        intent: { kind: 'Panic', name: 'Panic', args: ['17'] },
      };
    case 'unknown':
      return {
        call: call(encodeFunctionData({ abi: REVERTER, functionName: 'failUnknown', args: [n] })),
        intent: { kind: 'unknown', name: null, args: null },
      };
    default:
      return {
        call: call(encodeFunctionData({ abi: REVERTER, functionName: 'failEmpty' })),
        intent: { kind: 'empty', name: null, args: null },
      };
  }
}

/**
 * New accounts get ether for gas and both test tokens, in plain transactions (as wallets are
 * funded); the mints are recorded as the truth's plain-transaction transfers.
 */
async function fundAccounts(rd: RealisticDevnet, accounts: RealAccount[]): Promise<void> {
  if (accounts.length === 0) return;
  const mint = parseAbi(['function mint(address,uint256)']);
  const mints: Hex[] = [];
  for (const a of accounts) {
    await rd.operator.send({ to: a.address, value: 10n ** 18n });
    for (const [token, units] of [
      [rd.base.erc20Usd6, 10n ** 6n],
      [rd.base.erc20Dai18, 10n ** 18n],
    ] as const) {
      const data = encodeFunctionData({ abi: mint, functionName: 'mint', args: [a.address, 1_000n * units] });
      mints.push(await rd.operator.send({ to: token, data }));
    }
  }
  await rd.operator.public.waitForTransactionReceipt({ hash: mints.at(-1)! });
  const receipts = await rd.devnet.rpc.batch<RpcReceipt>(mints.map((h) => ['eth_getTransactionReceipt', [h]]));
  for (const r of receipts) {
    for (const l of r.logs) {
      if (l.topics[0] !== TOPICS.transfer) continue;
      const t = decodeTransferLog(l);
      rd.devnet.truth.plainTransfers.push({
        userOpHash: null,
        standard: 'ERC20',
        ...t,
        transactionHash: r.transactionHash.toLowerCase(),
        logIndex: Number(l.logIndex),
        blockNumber: Number(l.blockNumber),
      });
    }
  }
}

async function sendOp(rd: RealisticDevnet, intent: Intent): Promise<SentOp> {
  try {
    try {
      return await buildAndSend(rd, intent);
    } catch (err) {
      // Seen about once in 1,000 ops: a bundler answers AA25 (invalid nonce) while estimating an
      // op with a fresh nonce key, most likely because it still holds an earlier op of the same
      // sender that the competing bundler has included, and simulates it first until its next
      // bundling round drops it. Seen under load too: AA10 (sender already constructed) for an op
      // built with initCode while the account's deployment was landing, the SDK having read its code
      // just before. A wallet builds the op again a moment later; so do we, once (nothing was sent:
      // the first bundler refused it).
      const message = String((err as Error).message);
      if (!message.includes('AA25') && !message.includes('AA10')) throw err;
      await new Promise((r) => setTimeout(r, 1500));
      return await buildAndSend(rd, intent);
    }
  } catch (err) {
    const a = intent.account;
    const what = `${a.type} ${a.address} (${a.deployed ? 'deployed' : 'new'}, ${intent.expected}, paymaster ${intent.paymasterMode ?? 'none'}, nonce key ${intent.nonceKey ?? 'SDK default'})`;
    throw new Error(`sending an op of ${what}: ${(err as Error).message.split('\n')[0]}`, { cause: err });
  }
}

async function buildAndSend(rd: RealisticDevnet, intent: Intent): Promise<SentOp> {
  const { account } = intent;
  const [bundler] = intent.bundlers;
  const client = rd.operator.public;
  const chain = devnetChain(rd.devnet);
  const pimlico = createPimlicoClient({ chain, transport: http(bundler!.url) });
  const paymaster = intent.paymasterMode
    ? await paymasterService({ client, contracts: rd.contracts, signer: rd.paymasterSigner }, account.version, intent.paymasterMode)
    : undefined;
  const bundlerClient = createBundlerClient({
    client,
    chain,
    transport: http(bundler!.url),
    paymaster: paymaster as never,
    userOperation: { estimateFeesPerGas: async () => (await pimlico.getUserOperationGasPrice()).fast },
  });
  const toViem = (calls: Call[]) => calls.map((c) => ({ to: c.target, value: c.value, data: c.data }));
  let calls = intent.calls;
  let estimateWith = intent.estimateWith;
  if (intent.expected === 'postop-revert') {
    const balance = await client.readContract({
      address: rd.contracts.paymasterToken,
      abi: ERC20,
      functionName: 'balanceOf',
      args: [account.address],
    });
    const drain = (amount: bigint): Call => ({
      target: rd.contracts.paymasterToken,
      value: 0n,
      data: encodeFunctionData({ abi: ERC20, functionName: 'transfer', args: [DEAD, amount] }),
    });
    calls = [drain(balance)];
    estimateWith = [drain(0n)];
  }
  const authorization =
    intent.authorization ??
    (account.delegate && !account.deployed
      ? await account.owner.signAuthorization({
          chainId: rd.devnet.chainId,
          address: account.delegate,
          nonce: await client.getTransactionCount({ address: account.owner.address }),
        })
      : undefined);
  const nonceKey = intent.mode === 'replayable' ? COINBASE_REPLAYABLE_NONCE_KEY : intent.nonceKey;
  const nonce = nonceKey === null ? undefined : await account.sdk.getNonce({ key: nonceKey });
  const base = { account: account.sdk, ...(authorization ? { authorization } : {}), ...(nonce === undefined ? {} : { nonce }) };

  let gas = {};
  if (estimateWith) {
    const estimated = (await bundlerClient.prepareUserOperation({ ...base, calls: toViem(estimateWith) } as never)) as UserOperation;
    gas = {
      callGasLimit: (estimated.callGasLimit * 3n) / 2n + 50_000n,
      verificationGasLimit: (estimated.verificationGasLimit * 3n) / 2n,
      preVerificationGas: (estimated.preVerificationGas * 11n) / 10n + 5_000n,
    };
  }
  // A delegatecall is no call an SDK's encodeCalls makes: its ERC-7579 callData is given whole, in
  // the standard's layout (target ‖ data; permissionless 0.4.1's encode7579Calls puts a 32-byte value
  // between them, which Kernel v3.1+ run as calldata starting 0x00000000, and revert). Its target is
  // Safe's MultiSendCallOnly, stateless and made to be delegatecalled: the account makes the calls.
  // Coinbase's replayable owner changes are no call an SDK's encodeCalls makes either.
  const asked =
    intent.mode === 'delegatecall'
      ? {
          callData: encodeFunctionData({
            abi: ERC7579_EXECUTE,
            functionName: 'execute',
            args: [ERC7579_DELEGATECALL_MODE, concat([rd.contracts.safe.multiSendCallOnly, multiSendCallData(calls)])],
          }),
        }
      : intent.mode === 'replayable'
        ? {
            callData: encodeFunctionData({
              abi: COINBASE,
              functionName: 'executeWithoutChainIdValidation',
              args: [calls.map((c) => c.data)],
            }),
          }
        : { calls: toViem(calls) };
  const prepared = (await bundlerClient.prepareUserOperation({ ...base, ...asked, ...gas } as never)) as UserOperation;
  const signature =
    intent.mode === 'replayable' ? await signReplayable(rd, account, prepared) : await account.sdk.signUserOperation(prepared);
  const op = { ...prepared, signature };
  const entryPoint = account.sdk.entryPoint;
  const hash = getUserOperationHash({
    userOperation: op,
    entryPointAddress: entryPoint.address,
    entryPointVersion: entryPoint.version,
    chainId: rd.devnet.chainId,
  }).toLowerCase() as Hex;

  const request = formatUserOperationRequest(op);
  const sentTo: string[] = [];
  for (const [i, b] of intent.bundlers.entries()) {
    try {
      const answered = await b.rpc.call<Hex>('eth_sendUserOperation', [request, entryPoint.address]);
      if (answered.toLowerCase() !== hash) throw new Error(`bundler ${b.name} answered userOpHash ${answered}, the SDK computed ${hash}`);
      sentTo.push(b.name);
    } catch (err) {
      // The second of two competing bundlers may refuse an op the first has taken; the first may not.
      if (i === 0) throw new Error(`${account.type} op refused by bundler ${b.name}: ${(err as Error).message}`, { cause: err });
    }
  }
  const paymasterAddress = intent.paymasterMode ? (rd.contracts.paymasters[account.version].toLowerCase() as Address) : null;
  return {
    hash,
    accountType: account.type,
    implementation: ACCOUNT_KINDS[account.type].implementation,
    mode: intent.mode,
    version: account.version,
    entryPoint: entryPoint.address.toLowerCase() as Address,
    op,
    calls,
    paymaster: paymasterAddress,
    paymasterMode: intent.paymasterMode,
    expected: intent.expected,
    failureIntent: intent.failure ?? null,
    eip7702: account.delegate !== null,
    sentTo,
    moduleChanges: intent.moduleChanges ?? [],
  };
}

/**
 * A Coinbase Smart Wallet signature over the op's hash without the chain id (what the account
 * checks for nonce key 8453), as the account computes it (getUserOpHashWithoutChainId), wrapped in
 * its SignatureWrapper(ownerIndex 0, r ‖ s ‖ v) as viem wraps the chain-bound one.
 */
async function signReplayable(rd: RealisticDevnet, account: RealAccount, op: UserOperation): Promise<Hex> {
  const v06 = op as UserOperation<'0.6'>;
  const hash = await rd.operator.public.readContract({
    address: account.address,
    abi: COINBASE,
    functionName: 'getUserOpHashWithoutChainId',
    args: [{ ...v06, initCode: v06.initCode ?? '0x', paymasterAndData: v06.paymasterAndData ?? '0x', signature: '0x' }],
  });
  const signature = await account.owner.sign({ hash });
  return encodeAbiParameters(
    [
      {
        type: 'tuple',
        components: [
          { name: 'ownerIndex', type: 'uint8' },
          { name: 'signatureData', type: 'bytes' },
        ],
      },
    ],
    [{ ownerIndex: 0, signatureData: signature }],
  );
}

/** MultiSend.multiSend(operation 0 ‖ to ‖ value ‖ data length ‖ data, …): every transaction a CALL. */
function multiSendCallData(calls: Call[]): Hex {
  const packed = concat(
    calls.map((c) =>
      encodePacked(['uint8', 'address', 'uint256', 'uint256', 'bytes'], [0, c.target, c.value, BigInt(size(c.data)), c.data]),
    ),
  );
  return encodeFunctionData({ abi: MULTI_SEND, functionName: 'multiSend', args: [packed] });
}

async function waitForReceipt(rd: RealisticDevnet, s: SentOp): Promise<BundlerReceipt> {
  // Any bundler answers for an op another one included (Alto reads the receipt from the chain's logs).
  const bundler = rd.bundlers.find((b) => b.name === s.sentTo[0])!;
  const deadline = Date.now() + RECEIPT_TIMEOUT_MS;
  let nextLook = Date.now() + LOOK_AFTER_MS;
  let looks = 0;
  for (;;) {
    const receipt = await bundler.rpc.call<BundlerReceipt | null>('eth_getUserOperationReceipt', [s.hash]);
    if (receipt) return receipt;
    if (Date.now() > deadline)
      throw new Error(
        `${s.accountType} op ${s.hash} (${s.mode}, ${s.expected}, paymaster ${s.paymasterMode ?? 'none'}): no receipt from bundler ${bundler.name} within ${RECEIPT_TIMEOUT_MS} ms (sent to ${s.sentTo.join(', ')}); ` +
          `${await chainPoolState(rd)}\n${bundler.name}'s last output:\n${bundler.recentOutput()}`,
      );
    if (Date.now() > nextLook) {
      await sendAgainIfLost(rd, s, ++looks);
      nextLook = Date.now() + LOOK_AFTER_MS;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * What a wallet does with an op that has no receipt after a while: asks the bundlers it went to
 * (pimlico_getUserOperationStatus) and, when none of them still means to include it (Alto drops an
 * op whose bundle simulation failed for a reason of its own, an RPC timeout under load among them,
 * and marks `failed` an op whose bundle transaction reverted and which it then finds nowhere on
 * chain), sends the same signed op again; when a bundler still holds it but has not landed it (a
 * bundle transaction stuck on its executor's nonce, or an op left waiting in its mempool), it sends
 * it to the other bundler too. The first to include it answers; the op and its hash stay the same
 * (a 7702 op may carry a new authorization: reauthorizeIfConsumed). Each re-send is reported
 * (`rd.report`).
 */
async function sendAgainIfLost(rd: RealisticDevnet, s: SentOp, look: number): Promise<void> {
  const holders = rd.bundlers.filter((b) => s.sentTo.includes(b.name));
  const statuses = await Promise.all(
    holders.map((b) =>
      b.rpc
        .call<{ status: string; transactionHash: Hex | null } | null>('pimlico_getUserOperationStatus', [s.hash])
        .then((r) => ({ status: r?.status ?? 'not_found', tx: r?.transactionHash ?? null })),
    ),
  );
  // On chain: the receipt comes next. Still none a look later: the bundle transaction Alto counted as
  // included did not land (seen once under load, after a sibling op reverted), so it counts as stuck.
  if (statuses.some((st) => st.status === 'included') && look < 2) return;
  // `failed` is no inclusion: Alto sets it once the op's bundle transaction reverted and the op
  // reached the chain in no other transaction either, so no receipt follows.
  const lost = statuses.every((st) => ['rejected', 'reverted', 'failed', 'not_found'].includes(st.status));
  // Not lost, no receipt after LOOK_AFTER_MS: in a bundle transaction that did not land, or left in
  // a mempool its bundler no longer bundles from (seen: `not_submitted` for a minute, nothing logged).
  const to = lost ? holders[0]! : rd.bundlers.find((b) => !s.sentTo.includes(b.name));
  if (!to) return;
  const state = holders.map((b, i) => `${b.name} (${statuses[i]!.status}${statuses[i]!.tx ? ` in ${statuses[i]!.tx}` : ''})`).join(', ');
  rd.report(`op ${s.hash} (${s.accountType}) ${lost ? 'dropped by' : 'stuck in'} ${state}: sending it again to ${to.name}`);
  try {
    await reauthorizeIfConsumed(rd, s);
    await to.rpc.call<Hex>('eth_sendUserOperation', [formatUserOperationRequest(s.op), s.entryPoint]);
    if (!s.sentTo.includes(to.name)) s.sentTo.push(to.name);
  } catch (err) {
    // Included meanwhile (AA25, "already known") or invalid now: the receipt, or the timeout, tells.
    rd.report(`${to.name} refused op ${s.hash} again: ${(err as Error).message.split('\n')[0]}`);
  }
}

/**
 * A 7702 op's authorization is spent when a bundle transaction carrying it reverts: EIP-7702 applies
 * a transaction's authorization list before it runs and keeps it when the run reverts, so the EOA is
 * delegated and its nonce is one past the authorization's. A bundle reverts whenever another op of
 * its handleOps fails validation on chain: one that the competing bundler included between this
 * bundle's simulation and its transaction (AA25 invalid account nonce, or AA10 sender already
 * constructed for a deployment). Alto then drops the 7702 op (its authorization's nonce no longer
 * matches the EOA's), marks it `failed`, and every bundler refuses it sent again ("Invalid EIP-7702
 * authorization: The nonce does not match the userOperation sender address"). A wallet then
 * signs the authorization again at the EOA's nonce (same delegate); so does this. The op's hash and
 * signature cover the delegate's address but not the authorization's nonce: the op, its hash and its
 * signature stay the same.
 */
async function reauthorizeIfConsumed(rd: RealisticDevnet, s: SentOp): Promise<void> {
  const signed = s.op.authorization;
  if (!signed) return;
  const nonce = await rd.operator.public.getTransactionCount({ address: s.op.sender });
  if (nonce === signed.nonce) return;
  const account = rd.accounts.find((a) => a.address === s.op.sender.toLowerCase())!;
  const authorization = await account.owner.signAuthorization({ chainId: rd.devnet.chainId, address: signed.address, nonce });
  const op = { ...s.op, authorization };
  const hash = getUserOperationHash({
    userOperation: op,
    entryPointAddress: s.entryPoint,
    entryPointVersion: account.sdk.entryPoint.version,
    chainId: rd.devnet.chainId,
  }).toLowerCase();
  if (hash !== s.hash) throw new Error(`re-authorized op ${s.hash} hashes to ${hash}`);
  s.op = op;
  rd.report(`op ${s.hash}'s authorization (nonce ${signed.nonce}) is spent, the EOA's nonce is ${nonce}: signed again at ${nonce}`);
}

/** What the chain holds unmined and where each executor's nonce stands: why a bundle did not land. */
async function chainPoolState(rd: RealisticDevnet): Promise<string> {
  const executors = rd.bundlers.flatMap((b) => b.executors);
  const [pool, ...nonces] = await rd.devnet.rpc.batch<unknown>([
    ['txpool_inspect', []],
    ...executors.flatMap((e): Array<[string, unknown[]]> => [
      ['eth_getTransactionCount', [e, 'latest']],
      ['eth_getTransactionCount', [e, 'pending']],
    ]),
  ]);
  const executorNonces = executors.map((e, i) => `${e} ${Number(nonces[2 * i])}/${Number(nonces[2 * i + 1])}`).join(', ');
  return `the chain's pool: ${JSON.stringify(pool)}; executor nonces (latest/pending): ${executorNonces}`;
}
