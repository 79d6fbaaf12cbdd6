/**
 * Splits one bundle transaction's receipt logs into bundles and ops, from the logs alone (so an op
 * exists even when its calldata cannot be decoded). Each BeforeExecution of a known EntryPoint
 * opens a bundle; `bundle_index` counts them across EntryPoints in log order. An op's execution
 * slice runs from its bundle's previous boundary (BeforeExecution, SignatureAggregatorChanged or
 * the previous op's UserOperationEvent) to its own UserOperationEvent, included.
 * SignatureAggregatorChanged moving the boundary also keeps v0.6 handleAggregatedOps' validation
 * logs (emitted after its BeforeExecution) out of the first op's slice.
 */
import { HexReader } from '../../shared/calldata/hexAbi.js';
import type { EntryPointVersion } from '../../shared/networks.js';
import { dataWord, wordToAddress, wordToBigInt } from './abi.js';
import { hexToNumber, type RpcLog } from './chainTypes.js';
import { TOPICS, ZERO_ADDRESS } from '../../shared/chain/constants.js';

export type Failure = 'execution_reverted' | 'postop_reverted' | 'prefund_too_low';

export type LogOp = {
  userOpHash: string;
  entryPoint: string;
  version: EntryPointVersion;
  sender: string;
  paymaster: string | null;
  nonce: bigint;
  success: boolean;
  actualGasCost: bigint;
  actualGasUsed: bigint;
  logIndex: number;
  bundleIndex: number;
  /** Execution slice [execLogFrom, execLogTo) in block-level log indexes. */
  execLogFrom: number;
  execLogTo: number;
  /** From SignatureAggregatorChanged (handleAggregatedOps); null otherwise. */
  aggregator: string | null;
  failure: Failure | null;
  revertReason: string | null;
  /** AccountDeployed for this op: the factory that created its sender. */
  deployment: { factory: string; logIndex: number } | null;
  /** v0.9 EIP7702AccountInitialized for this op: its sender is a 7702 delegated EOA. */
  eip7702Initialized: boolean;
};

export type LogBundle = {
  bundleIndex: number;
  entryPoint: string;
  version: EntryPointVersion;
  aggregated: boolean;
  ops: LogOp[];
};

type OpenBundle = LogBundle & { boundary: number; aggregator: string | null };

type OpExtras = {
  reverts: Map<string, { failure: Failure; data: string | null }>;
  deployments: Map<string, { factory: string; logIndex: number }>;
  eip7702Initialized: Set<string>;
};

/** The `bytes revertReason` of (uint256 nonce, bytes revertReason) event data (hexAbi: ethers' decoder was the largest decode cost in a backfill profile). */
const revertData = (data: string): string => HexReader.of(data).bytes(0, 32);

/** Revert and deployment events, keyed by the userOpHash they carry (topic 1). */
function collectExtras(logs: RpcLog[], entryPoints: Map<string, EntryPointVersion>): OpExtras {
  const extras: OpExtras = { reverts: new Map(), deployments: new Map(), eip7702Initialized: new Set() };
  for (const log of logs) {
    if (!entryPoints.has(log.address.toLowerCase())) continue;
    const [topic0, hash] = log.topics;
    if (!hash) continue;
    switch (topic0) {
      case TOPICS.userOperationRevertReason:
        extras.reverts.set(hash, { failure: 'execution_reverted', data: revertData(log.data) });
        break;
      case TOPICS.postOpRevertReason:
        extras.reverts.set(hash, { failure: 'postop_reverted', data: revertData(log.data) });
        break;
      case TOPICS.userOperationPrefundTooLow:
        extras.reverts.set(hash, { failure: 'prefund_too_low', data: null });
        break;
      case TOPICS.accountDeployed:
        extras.deployments.set(hash, { factory: wordToAddress(dataWord(log.data, 0)), logIndex: hexToNumber(log.logIndex) });
        break;
      case TOPICS.eip7702AccountInitialized:
        extras.eip7702Initialized.add(hash);
        break;
      default:
        // Any other event (or a log without topics) says nothing about this.
        break;
    }
  }
  return extras;
}

/** Bundles of one transaction, in log order. `logs` are the receipt's logs (any order). */
export function splitBundles(logs: RpcLog[], entryPoints: Map<string, EntryPointVersion>): LogBundle[] {
  const sorted = [...logs].sort((a, b) => hexToNumber(a.logIndex) - hexToNumber(b.logIndex));
  const extras = collectExtras(sorted, entryPoints);
  const bundles: OpenBundle[] = [];
  const latestOf = (entryPoint: string): OpenBundle | undefined => bundles.findLast((b) => b.entryPoint === entryPoint);
  const open = (entryPoint: string, version: EntryPointVersion, boundary: number): OpenBundle => {
    const b: OpenBundle = { bundleIndex: bundles.length, entryPoint, version, aggregated: false, ops: [], boundary, aggregator: null };
    bundles.push(b);
    return b;
  };

  for (const log of sorted) {
    const entryPoint = log.address.toLowerCase();
    const version = entryPoints.get(entryPoint);
    if (!version) continue;
    const logIndex = hexToNumber(log.logIndex);
    switch (log.topics[0]) {
      case TOPICS.beforeExecution:
        open(entryPoint, version, logIndex);
        break;
      case TOPICS.signatureAggregatorChanged: {
        const b = latestOf(entryPoint) ?? open(entryPoint, version, logIndex);
        const aggregator = wordToAddress(log.topics[1] ?? '0x');
        b.aggregator = aggregator === ZERO_ADDRESS ? null : aggregator;
        b.aggregated = true;
        b.boundary = logIndex;
        break;
      }
      case TOPICS.userOperationEvent: {
        // A UserOperationEvent without a BeforeExecution cannot come from v0.6+; keep the op anyway.
        const b = latestOf(entryPoint) ?? open(entryPoint, version, logIndex - 1);
        const hash = log.topics[1]!;
        const paymaster = wordToAddress(log.topics[3] ?? '0x');
        const success = wordToBigInt(dataWord(log.data, 1)) !== 0n;
        const revert = extras.reverts.get(hash);
        b.ops.push({
          userOpHash: hash.toLowerCase(),
          entryPoint,
          version,
          sender: wordToAddress(log.topics[2] ?? '0x'),
          paymaster: paymaster === ZERO_ADDRESS ? null : paymaster,
          nonce: wordToBigInt(dataWord(log.data, 0)),
          success,
          actualGasCost: wordToBigInt(dataWord(log.data, 2)),
          actualGasUsed: wordToBigInt(dataWord(log.data, 3)),
          logIndex,
          bundleIndex: b.bundleIndex,
          execLogFrom: b.boundary + 1,
          execLogTo: logIndex + 1,
          aggregator: b.aggregator,
          // Empty revert data emits no reason event: the op still failed in execution.
          failure: success ? null : (revert?.failure ?? 'execution_reverted'),
          revertReason: success ? null : (revert?.data ?? null),
          deployment: extras.deployments.get(hash) ?? null,
          eip7702Initialized: extras.eip7702Initialized.has(hash),
        });
        b.boundary = logIndex;
        break;
      }
      default:
        // Any other event (or a log without topics) says nothing about this.
        break;
    }
  }
  return bundles.map(({ bundleIndex, entryPoint, version, aggregated, ops }) => ({ bundleIndex, entryPoint, version, aggregated, ops }));
}
