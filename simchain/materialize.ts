/**
 * The expensive half of a block: one slot of a skeleton (plan.ts) turned into the transaction, its
 * receipt and logs as a node answers them, and for a bundle the ops as the EntryPoint saw them
 * (real handleOps calldata, userOpHashes computed by viem: opHash.ts) with what opscan must derive
 * from them (truth.ts). Log order in a bundle is the EntryPoint's: AccountDeployed during
 * validation, BeforeExecution, then per op its execution's logs (or UserOperationRevertReason)
 * and its UserOperationEvent.
 */
import { AbiCoder, concat } from 'ethers';
import { ENTRY_POINT_V06, ENTRY_POINT_V07, SELECTORS } from '../indexer/decode/abi.js';
import type { RpcLog } from '../indexer/decode/chainTypes.js';
import type { TruthTransfer } from '../devnet/truth.js';
import { packPaymasterAndData, packedGasFields, type UserOp } from '../devnet/userop.js';
import { address as abiAddress, array, bytes, bytes32, encodeCall, tuple, uint } from './abiEncode.js';
import { opHash } from './opHash.js';
import { ALL_FAMILIES, type Call } from './accounts.js';
import { ActorKind, actorAddress, addressWord, blockHash, filler32, mix, quantity, topicOf, transactionHash, uintWord } from './ids.js';
import type { BundlePlan, CallPlan, ChainPlan, OpPlan, Party, Skeleton, Slot } from './plan.js';
import { CANONICAL_ENTRYPOINTS, TOPICS, ZERO_ADDRESS } from '../shared/chain/constants.js';

export type JsonLog = RpcLog & { removed: false };

/** A token transfer as opscan stores it (TruthTransfer's fields before attribution to an op and a transaction). */
export type TransferFact = Omit<TruthTransfer, 'userOpHash' | 'transactionHash'>;

export type MaterializedOp = {
  plan: OpPlan;
  op: UserOp;
  hash: string;
  sender: string;
  paymaster: string | null;
  factory: string | null;
  calls: Call[];
  revertReason: string | null;
  actualGasCost: bigint;
  /** Block-level log index of its UserOperationEvent. */
  logIndex: number;
  transfers: TransferFact[];
};

export type MaterializedBundle = { version: BundlePlan['version']; entryPoint: string; beneficiary: string; ops: MaterializedOp[] };

export type SimTx = {
  tx: Record<string, unknown> & { hash: string; from: string; to: string; input: string };
  receipt: Record<string, unknown> & { logs: JsonLog[]; gasUsed: string; effectiveGasPrice: string; l1Fee?: string };
  /** Token transfers of a filler transaction (for the plain-transfer truth). */
  transfers: TransferFact[];
  bundle: MaterializedBundle | null;
};

const abi = AbiCoder.defaultAbiCoder();
const hex = (n: number | bigint): string => quantity(n);

const SEL = { transfer: '0xa9059cbb', transferFrom: '0x23b872dd', safeTransferFrom: '0xf242432a', dapp: '0x3593564c' } as const;
const OTHER_TOPICS = {
  sync: '0x1c411e9a96e071241c2f21f7726b17ae89e3cab4c78be50e062b03a9fffbbad1',
  swap: '0xd78ad95fa46c994b6551d0da85fc275fe613ce37657fb8d5e3d130840159d822',
  approval: '0x8c5be1e5ebec7d5bd14f71427e1e84f3dd0314c0f7b2291e5b200ac8c7c3b925',
  deposit: '0xe1fffcc4923d04b559f4d29a8bfc6cda04eb5b0d3c460751c2402c5c5cc9109c',
  answerUpdated: '0x0559884fd3a460db3073b7fc896cc77986f16e378210ded43186175bf646fc5f',
} as const;
/** Error(string) "ERC20: transfer amount exceeds balance": the revert data of failed ops. */
const REVERT_DATA =
  '0x08c379a0000000000000000000000000000000000000000000000000000000000000002000000000000000000000000000000000000000000000000000000000000000264552433230' +
  '3a207472616e7366657220616d6f756e7420657863656564732062616c616e63650000000000000000000000000000000000000000000000000000';

export class Materializer {
  constructor(
    readonly plan: ChainPlan,
    private readonly logTimestamps: boolean,
  ) {}

  get seed(): number {
    return this.plan.seed;
  }

  address(kind: ActorKind, id: number): string {
    return actorAddress(this.seed, kind, id);
  }

  partyAddress(p: Party): string {
    return 'holder' in p ? this.address(ActorKind.holder, p.holder) : this.address(ActorKind.account, p.account);
  }

  entryPoint(version: BundlePlan['version']): string {
    return CANONICAL_ENTRYPOINTS[version];
  }

  bundlerAddress(id: number): string {
    return this.address(ActorKind.bundler, id);
  }

  slot(sk: Skeleton, index: number): SimTx {
    const slot = sk.slots[index]!;
    const ctx = new TxContext(this, sk, index, slot);
    return slot.bundle ? this.bundleTx(ctx, slot.bundle) : this.fillerTx(ctx);
  }

  private fillerTx(ctx: TxContext): SimTx {
    const { n, index } = ctx;
    const shape = this.plan.fillerShape(n, index, ctx.slot.kind === 'spam');
    const r = shape.r;
    const holders = this.plan.profile.holders;
    const holderId = r.int(0, holders - 1);
    const from = this.address(ActorKind.holder, holderId);
    const transfers: TransferFact[] = [];
    const erc20 = (token: string, a: string, b: string, amount: bigint): void => {
      const logIndex = ctx.log(token, [TOPICS.transfer, topicOf(a), topicOf(b)], `0x${uintWord(amount)}`);
      transfers.push({ standard: 'ERC20', token, from: a, to: b, value: amount.toString(), tokenId: null, logIndex });
    };
    const amount = (): bigint => BigInt(r.int(1, 2_000_000_000)) * 1_000_000_000n;
    let to: string;
    let input = '0x';
    let value = 0n;
    switch (shape.kind) {
      case 'plain':
        to = this.partyAddress(this.plan.party(r));
        value = amount();
        break;
      case 'erc20': {
        to = this.address(ActorKind.token, r.int(0, this.plan.profile.tokens - 1));
        const dest = this.partyAddress(this.plan.party(r));
        const v = amount();
        input = `${SEL.transfer}${addressWord(dest)}${uintWord(v)}`;
        erc20(to, from, dest, v);
        break;
      }
      case 'swap': {
        to = this.address(ActorKind.router, r.int(0, 3));
        const pair = this.address(ActorKind.pair, r.int(0, 999));
        const [a, b] = [r.int(0, this.plan.profile.tokens - 1), r.int(0, this.plan.profile.tokens - 1)];
        const [inAmount, outAmount] = [amount(), amount()];
        input = `${SEL.dapp}${uintWord(inAmount)}${uintWord(outAmount)}${addressWord(from)}`;
        erc20(this.address(ActorKind.token, a), from, pair, inAmount);
        erc20(this.address(ActorKind.token, b), pair, from, outAmount);
        ctx.log(pair, [OTHER_TOPICS.sync], `0x${uintWord(amount())}${uintWord(amount())}`);
        ctx.log(
          pair,
          [OTHER_TOPICS.swap, topicOf(to), topicOf(from)],
          `0x${uintWord(inAmount)}${uintWord(0)}${uintWord(0)}${uintWord(outAmount)}`,
        );
        break;
      }
      case 'nft': {
        to = this.address(ActorKind.nft, r.int(0, 15));
        const mint = r.chance(0.4);
        const a = mint ? ZERO_ADDRESS : from;
        const b = this.partyAddress(this.plan.party(r));
        const id = BigInt(r.int(1, 5_000_000));
        input = `${SEL.transferFrom}${addressWord(a)}${addressWord(b)}${uintWord(id)}`;
        const logIndex = ctx.log(to, [TOPICS.transfer, topicOf(a), topicOf(b), `0x${uintWord(id)}`], '0x');
        transfers.push({ standard: 'ERC721', token: to, from: a, to: b, value: '1', tokenId: id.toString(), logIndex });
        break;
      }
      case 'multi': {
        to = this.address(ActorKind.multiToken, r.int(0, 15));
        const b = this.partyAddress(this.plan.party(r));
        const ids = Array.from({ length: r.chance(0.3) ? r.int(2, 3) : 1 }, () => BigInt(r.int(1, 1000)));
        const counts = ids.map(() => BigInt(r.int(1, 50)));
        const topics = (topic: string) => [topic, topicOf(from), topicOf(from), topicOf(b)];
        input = `${SEL.safeTransferFrom}${addressWord(from)}${addressWord(b)}${uintWord(ids[0]!)}${uintWord(counts[0]!)}${uintWord(0xa0)}${uintWord(0)}`;
        const logIndex =
          ids.length === 1
            ? ctx.log(to, topics(TOPICS.transferSingle), `0x${uintWord(ids[0]!)}${uintWord(counts[0]!)}`)
            : ctx.log(to, topics(TOPICS.transferBatch), abi.encode(['uint256[]', 'uint256[]'], [ids, counts]));
        ids.forEach((id, i) =>
          transfers.push({ standard: 'ERC1155', token: to, from, to: b, value: counts[i]!.toString(), tokenId: id.toString(), logIndex }),
        );
        break;
      }
      case 'spam': {
        to = this.address(ActorKind.spamToken, r.int(0, 3));
        input = `${SEL.dapp}${uintWord(shape.logCount)}`;
        for (let i = 0; i < shape.logCount; i++) erc20(to, from, this.partyAddress(this.plan.party(r)), 1_000_000_000_000_000_000n);
        break;
      }
      default: {
        // Other contracts: oracles, DEX pools, vaults; some of their logs move tokens.
        to = this.address(ActorKind.dapp, r.int(0, 63));
        input = `${SEL.dapp}${uintWord(r.int(0, 1e9))}${addressWord(from)}`;
        for (let i = 0; i < shape.logCount; i++) {
          const pick = r.next();
          if (pick < 0.3)
            erc20(
              this.address(ActorKind.token, r.int(0, this.plan.profile.tokens - 1)),
              to,
              this.partyAddress(this.plan.party(r)),
              amount(),
            );
          else if (pick < 0.5) ctx.log(to, [OTHER_TOPICS.sync], `0x${uintWord(amount())}${uintWord(amount())}`);
          else if (pick < 0.65)
            ctx.log(
              to,
              [OTHER_TOPICS.swap, topicOf(from), topicOf(from)],
              `0x${uintWord(amount())}${uintWord(0)}${uintWord(0)}${uintWord(amount())}`,
            );
          else if (pick < 0.8) ctx.log(to, [OTHER_TOPICS.approval, topicOf(from), topicOf(to)], `0x${uintWord(amount())}`);
          else if (pick < 0.9) ctx.log(to, [OTHER_TOPICS.deposit, topicOf(from)], `0x${uintWord(amount())}`);
          else
            ctx.log(
              to,
              [OTHER_TOPICS.answerUpdated, `0x${uintWord(r.int(0, 1e9))}`, `0x${uintWord(r.int(0, 1e6))}`],
              `0x${uintWord(ctx.timestamp)}`,
            );
        }
      }
    }
    const nonce = (mix(this.seed, 0x40, holderId) % 5000) + Math.floor(n / 1000);
    return { ...ctx.finish(from, to, input, value, nonce), transfers, bundle: null };
  }

  private bundleTx(ctx: TxContext, plan: BundlePlan): SimTx {
    const entryPoint = this.entryPoint(plan.version);
    const bundler = this.bundlerAddress(plan.bundler);
    const beneficiary = plan.bundler % 3 === 2 ? this.address(ActorKind.beneficiary, plan.bundler) : bundler;
    const built = plan.ops.map((o) => this.buildOp(o, plan.version, entryPoint));
    const ops: MaterializedOp[] = [];
    // Validation: deployments.
    for (const b of built)
      if (b.factory)
        ctx.log(
          entryPoint,
          [TOPICS.accountDeployed, b.hash, topicOf(b.sender)],
          `0x${addressWord(b.factory)}${addressWord(b.paymaster ?? ZERO_ADDRESS)}`,
        );
    ctx.log(entryPoint, [TOPICS.beforeExecution], '0x');
    for (const b of built) {
      const transfers: TransferFact[] = [];
      if (b.plan.success) {
        b.plan.calls.forEach((c, i) => {
          const fact = this.callLog(ctx, c, b.sender, b.calls[i]!);
          if (fact) transfers.push(fact);
        });
      } else {
        ctx.log(
          entryPoint,
          [TOPICS.userOperationRevertReason, b.hash, topicOf(b.sender)],
          abi.encode(['uint256', 'bytes'], [b.op.nonce, REVERT_DATA]),
        );
      }
      const gasPrice =
        b.op.maxFeePerGas < ctx.sk.baseFee + b.op.maxPriorityFeePerGas ? b.op.maxFeePerGas : ctx.sk.baseFee + b.op.maxPriorityFeePerGas;
      const actualGasCost = b.plan.actualGasUsed * gasPrice;
      const logIndex = ctx.log(
        entryPoint,
        [TOPICS.userOperationEvent, b.hash, topicOf(b.sender), topicOf(b.paymaster ?? ZERO_ADDRESS)],
        `0x${uintWord(b.op.nonce)}${uintWord(b.plan.success ? 1 : 0)}${uintWord(actualGasCost)}${uintWord(b.plan.actualGasUsed)}`,
      );
      if (b.plan.success) {
        b.calls.forEach((c) => {
          if (c.value > 0n)
            transfers.push({
              standard: 'NATIVE',
              token: null,
              from: b.sender,
              to: c.target,
              value: c.value.toString(),
              tokenId: null,
              logIndex: null,
            });
        });
      }
      ops.push({ ...b, revertReason: b.plan.success ? null : REVERT_DATA, actualGasCost, logIndex, transfers });
    }
    const input = encodeHandleOps(
      plan.version,
      built.map((b) => b.op),
      beneficiary,
    );
    const nonce = ctx.n * 64 + (ctx.index % 64);
    return {
      ...ctx.finish(bundler, entryPoint, input, 0n, nonce),
      transfers: [],
      bundle: { version: plan.version, entryPoint, beneficiary, ops },
    };
  }

  /** The account call's calldata; its target and value. */
  private call(c: CallPlan, sender: string): Call {
    const to = this.partyAddress(c.to);
    switch (c.kind) {
      case 'erc20':
        return {
          target: this.address(ActorKind.token, c.contract),
          value: 0n,
          data: `${SEL.transfer}${addressWord(to)}${uintWord(c.amount)}`,
        };
      case 'nft':
        return {
          target: this.address(ActorKind.nft, c.contract),
          value: 0n,
          data: `${SEL.transferFrom}${addressWord(sender)}${addressWord(to)}${uintWord(c.tokenId)}`,
        };
      case 'multi':
        return {
          target: this.address(ActorKind.multiToken, c.contract),
          value: 0n,
          data: `${SEL.safeTransferFrom}${addressWord(sender)}${addressWord(to)}${uintWord(c.tokenId % 1000n)}${uintWord((c.amount % 100n) + 1n)}${uintWord(0xa0)}${uintWord(0)}`,
        };
      case 'native':
        return { target: to, value: c.amount / 1000n, data: '0x' };
      default:
        return {
          target: this.address(ActorKind.dapp, c.contract),
          value: 0n,
          data: `${SEL.dapp}${uintWord(c.amount)}${addressWord(sender)}`,
        };
    }
  }

  /** The log the account's call makes emit, as a transfer when it is one. */
  private callLog(ctx: TxContext, c: CallPlan, sender: string, call: Call): TransferFact | null {
    const to = this.partyAddress(c.to);
    switch (c.kind) {
      case 'erc20': {
        const logIndex = ctx.log(call.target, [TOPICS.transfer, topicOf(sender), topicOf(to)], `0x${uintWord(c.amount)}`);
        return { standard: 'ERC20', token: call.target, from: sender, to, value: c.amount.toString(), tokenId: null, logIndex };
      }
      case 'nft': {
        const logIndex = ctx.log(call.target, [TOPICS.transfer, topicOf(sender), topicOf(to), `0x${uintWord(c.tokenId)}`], '0x');
        return { standard: 'ERC721', token: call.target, from: sender, to, value: '1', tokenId: c.tokenId.toString(), logIndex };
      }
      case 'multi': {
        const [id, count] = [c.tokenId % 1000n, (c.amount % 100n) + 1n];
        const logIndex = ctx.log(
          call.target,
          [TOPICS.transferSingle, topicOf(sender), topicOf(sender), topicOf(to)],
          `0x${uintWord(id)}${uintWord(count)}`,
        );
        return { standard: 'ERC1155', token: call.target, from: sender, to, value: count.toString(), tokenId: id.toString(), logIndex };
      }
      case 'dapp':
        ctx.log(call.target, [OTHER_TOPICS.deposit, topicOf(sender)], `0x${uintWord(c.amount)}`);
        return null;
      default:
        return null;
    }
  }

  private buildOp(o: OpPlan, version: BundlePlan['version'], entryPoint: string) {
    const sender = this.address(ActorKind.account, o.account);
    const calls = o.calls.map((c) => this.call(c, sender));
    const familyIndex = ALL_FAMILIES.indexOf(o.family);
    const factory = o.deploy ? this.address(ActorKind.factory, familyIndex) : null;
    const initCode = factory
      ? concat([factory, o.family.factoryData(this.address(ActorKind.owner, o.account), BigInt(o.salt % 16))]).toLowerCase()
      : '0x';
    const paymaster = o.paymaster === null ? null : this.address(ActorKind.paymaster, o.paymaster);
    // VerifyingPaymaster-style data: validUntil, validAfter, a 65-byte signature.
    const paymasterData = `${uintWord(0xffffffffffff)}${uintWord(0)}${filler32(o.salt, 1)}${filler32(o.salt, 2)}1b`;
    const paymasterAndData = paymaster
      ? `${packPaymasterAndData(version, paymaster, { verification: 60_000n + BigInt(o.salt % 40_000), postOp: 50_000n })}${paymasterData}`
      : '0x';
    const op: UserOp = {
      sender,
      nonce: o.nonce,
      initCode,
      callData: o.family.encode(calls).toLowerCase(),
      callGasLimit: o.callGasLimit,
      verificationGasLimit: o.verificationGasLimit,
      preVerificationGas: o.preVerificationGas,
      maxFeePerGas: o.maxFeePerGas,
      maxPriorityFeePerGas: o.maxPriorityFeePerGas,
      paymasterAndData,
      signature: `0x${filler32(o.salt, 3)}${filler32(o.salt, 4)}1c`,
    };
    const hash = opHash(op, version, entryPoint, this.plan.profile.chainId);
    return { plan: o, op, hash, sender, paymaster, factory, calls };
  }

  /** The callTracer frame tree of slot `index`: EntryPoint → account → targets for a bundle, one frame otherwise. */
  trace(sim: SimTx): Record<string, unknown> {
    const { tx, receipt } = sim;
    const frame = {
      type: 'CALL',
      from: tx.from,
      to: tx.to,
      value: tx.value,
      gas: tx.gas,
      gasUsed: receipt.gasUsed,
      input: tx.input,
      output: '0x',
    };
    if (!sim.bundle) return frame;
    const { entryPoint, version, ops } = sim.bundle;
    const validations = ops.map((o) => ({
      type: 'CALL',
      from: entryPoint,
      to: o.sender,
      value: '0x0',
      gas: hex(o.op.verificationGasLimit),
      gasUsed: hex(o.op.verificationGasLimit / 2n),
      input: `0x19822f7c${uintWord(0x60)}${o.hash.slice(2)}${uintWord(0)}`,
      output: `0x${uintWord(0)}`,
    }));
    const executions = ops.map((o) => {
      const accountFrame: Record<string, unknown> = {
        type: 'CALL',
        from: entryPoint,
        to: o.sender,
        value: '0x0',
        gas: hex(o.op.callGasLimit),
        gasUsed: hex(o.op.callGasLimit / 2n),
        input: o.op.callData,
        output: '0x',
        calls: o.calls.map((c) => ({
          type: 'CALL',
          from: o.sender,
          to: c.target,
          value: hex(c.value),
          gas: hex(o.op.callGasLimit / 2n),
          gasUsed: hex(30_000),
          input: c.data,
          output: '0x',
        })),
      };
      if (!o.plan.success) Object.assign(accountFrame, { error: 'execution reverted', output: o.revertReason });
      return {
        type: 'CALL',
        from: entryPoint,
        to: entryPoint,
        value: '0x0',
        gas: hex(o.op.callGasLimit + 50_000n),
        gasUsed: hex(o.plan.actualGasUsed / 2n),
        input: innerHandleOpInput(o, version),
        output: `0x${uintWord(o.actualGasCost)}`,
        calls: [accountFrame],
      };
    });
    return { ...frame, calls: [...validations, ...executions] };
  }
}

/** handleOps(ops, beneficiary) as the version's EntryPoint ABI encodes it (v0.6 UserOperation, v0.7+ PackedUserOperation). */
export function encodeHandleOps(version: BundlePlan['version'], ops: UserOp[], beneficiary: string): string {
  const structs = ops.map((op) => {
    if (version === 'v0.6') {
      return tuple(
        abiAddress(op.sender),
        uint(op.nonce),
        bytes(op.initCode),
        bytes(op.callData),
        uint(op.callGasLimit),
        uint(op.verificationGasLimit),
        uint(op.preVerificationGas),
        uint(op.maxFeePerGas),
        uint(op.maxPriorityFeePerGas),
        bytes(op.paymasterAndData),
        bytes(op.signature),
      );
    }
    const { accountGasLimits, gasFees } = packedGasFields(op);
    return tuple(
      abiAddress(op.sender),
      uint(op.nonce),
      bytes(op.initCode),
      bytes(op.callData),
      bytes32(accountGasLimits),
      uint(op.preVerificationGas),
      bytes32(gasFees),
      bytes(op.paymasterAndData),
      bytes(op.signature),
    );
  });
  return encodeCall(version === 'v0.6' ? SELECTORS.handleOpsV06 : SELECTORS.handleOpsV07, [array(structs), abiAddress(beneficiary)]);
}

/** innerHandleOp(callData, opInfo, context): the EntryPoint's self-call executing one op (how a trace ties frames to ops). */
function innerHandleOpInput(o: MaterializedOp, version: BundlePlan['version']): string {
  const op = o.op;
  const paymaster = o.paymaster ?? ZERO_ADDRESS;
  if (version === 'v0.6') {
    const mUserOp = [
      op.sender,
      op.nonce,
      op.callGasLimit,
      op.verificationGasLimit,
      op.preVerificationGas,
      paymaster,
      op.maxFeePerGas,
      op.maxPriorityFeePerGas,
    ];
    return ENTRY_POINT_V06.encodeFunctionData('innerHandleOp', [op.callData, [mUserOp, o.hash, 0n, 0n, 0n], '0x']);
  }
  const mUserOp = [
    op.sender,
    op.nonce,
    op.verificationGasLimit,
    op.callGasLimit,
    0n,
    0n,
    op.preVerificationGas,
    paymaster,
    op.maxFeePerGas,
    op.maxPriorityFeePerGas,
  ];
  return ENTRY_POINT_V07.encodeFunctionData('innerHandleOp', [op.callData, [mUserOp, o.hash, 0n, 0n, 0n], '0x']);
}

/** Builds one transaction's logs in block order and then its transaction and receipt objects. */
class TxContext {
  readonly n: number;
  readonly logs: JsonLog[] = [];
  private readonly blockHashHex: string;
  private readonly txHash: string;
  private readonly indexHex: string;
  private readonly blockNumberHex: string;
  private readonly timestampHex: string | undefined;

  constructor(
    private readonly m: Materializer,
    readonly sk: Skeleton,
    readonly index: number,
    readonly slot: Slot,
  ) {
    this.n = sk.number;
    this.blockHashHex = blockHash(m.seed, sk.number);
    this.txHash = transactionHash(m.seed, sk.number, index);
    this.indexHex = hex(index);
    this.blockNumberHex = hex(sk.number);
    this.timestampHex = m['logTimestamps'] ? hex(sk.timestamp) : undefined;
  }

  get timestamp(): number {
    return this.sk.timestamp;
  }

  /** Appends a log; returns its block-level index. */
  log(address: string, topics: string[], data: string): number {
    const logIndex = this.slot.logOffset + this.logs.length;
    const log: JsonLog = {
      address,
      topics,
      data,
      blockNumber: this.blockNumberHex,
      blockHash: this.blockHashHex,
      transactionHash: this.txHash,
      transactionIndex: this.indexHex,
      logIndex: hex(logIndex),
      removed: false,
    };
    if (this.timestampHex) log.blockTimestamp = this.timestampHex;
    this.logs.push(log);
    return logIndex;
  }

  finish(from: string, to: string, input: string, value: bigint, nonce: number): Pick<SimTx, 'tx' | 'receipt'> {
    if (this.logs.length !== this.slot.logCount)
      throw new Error(`block ${this.n} tx ${this.index}: ${this.logs.length} logs, planned ${this.slot.logCount}`);
    const { baseFee } = this.sk;
    const gasPrice = baseFee + this.slot.tip;
    const signature = filler32(this.m.seed, this.n, this.index);
    const common = { blockHash: this.blockHashHex, blockNumber: this.blockNumberHex, transactionIndex: this.indexHex };
    const tx = {
      hash: this.txHash,
      ...common,
      type: '0x2',
      from,
      to,
      value: hex(value),
      nonce: hex(nonce),
      gas: hex((this.slot.gasUsed * 13n) / 10n),
      gasPrice: hex(gasPrice),
      maxFeePerGas: hex(baseFee * 2n + this.slot.tip),
      maxPriorityFeePerGas: hex(this.slot.tip),
      input,
      chainId: hex(this.m.plan.profile.chainId),
      accessList: [],
      v: '0x0',
      yParity: '0x0',
      r: `0x${signature}`,
      s: `0x0${signature.slice(1, 32)}${signature.slice(32)}`,
    };
    const receipt: SimTx['receipt'] = {
      transactionHash: this.txHash,
      ...common,
      from,
      to,
      cumulativeGasUsed: hex(this.slot.cumulativeGasUsed),
      gasUsed: hex(this.slot.gasUsed),
      effectiveGasPrice: hex(gasPrice),
      contractAddress: null,
      logs: this.logs,
      logsBloom: EMPTY_BLOOM,
      status: '0x1',
      type: '0x2',
    };
    if (this.m.plan.profile.opStack) {
      // The L1 data fee grows with calldata; the L1 gas price is a fixed guess.
      const l1GasUsed = BigInt(1600 + (input.length - 2) * 8);
      Object.assign(receipt, {
        l1GasUsed: hex(l1GasUsed),
        l1GasPrice: hex(2_000_000_000),
        l1Fee: hex((l1GasUsed * 2_000_000_000n) / 1000n),
      });
    }
    return { tx, receipt };
  }
}

export const EMPTY_BLOOM = `0x${'0'.repeat(512)}`;
