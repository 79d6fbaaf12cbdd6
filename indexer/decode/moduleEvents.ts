/**
 * ERC-7579 ModuleInstalled / ModuleUninstalled events of a bundle transaction, each with the op
 * whose sender emitted it during the op. Two places count as the op's:
 * - its execution slice (logOwners), where an installModule / uninstallModule call of the op runs;
 * - its validation, which comes before its bundle's BeforeExecution: where the factory deploys the
 *   sender (the installs of the account's initialisation, before the op's AccountDeployed) and
 *   where an account enables a module while validating (Kernel's and Nexus' enable mode).
 * A module event of any other address (an account that is no sender of the op) is not an op's.
 */
import { dataWord, wordToAddress, wordToBigInt } from './abi.js';
import { hexToNumber, type RpcLog } from './chainTypes.js';
import type { DecodedBundleTx, DecodedModuleEvent, DecodedUserOp } from './decodedBatch.js';
import { logOwners } from '../../shared/db/tables/logs.js';
import { TOPICS } from '../../shared/chain/constants.js';

/**
 * The event's (moduleTypeId, module), or null for a same-named event of another layout. The
 * standard leaves both unindexed; an implementation that indexes either still gives two words, in
 * the order of the arguments, across its topics and data.
 */
function moduleOf(log: RpcLog): { moduleTypeId: bigint; module: string } | null {
  const dataWords = (log.data.length - 2) / 64;
  if (!Number.isInteger(dataWords)) return null;
  const words = [...log.topics.slice(1).map((t) => t.slice(2)), ...Array.from({ length: dataWords }, (_, i) => dataWord(log.data, i))];
  if (words.length !== 2 || !/^0{24}/.test(words[1]!)) return null;
  return { moduleTypeId: wordToBigInt(words[0]!), module: wordToAddress(words[1]!) };
}

export function moduleEventsOf(logs: readonly RpcLog[], tx: DecodedBundleTx, userOps: readonly DecodedUserOp[]): DecodedModuleEvent[] {
  const candidates = logs.filter((l) => l.topics[0] === TOPICS.moduleInstalled || l.topics[0] === TOPICS.moduleUninstalled);
  if (candidates.length === 0) return [];
  const owners = logOwners(userOps, tx.firstLogIndex, tx.logs.length);
  const byHash = new Map(userOps.map((o) => [o.userOpHash, o]));
  const events: DecodedModuleEvent[] = [];
  for (const log of candidates) {
    const decoded = moduleOf(log);
    if (!decoded) continue;
    const logIndex = hexToNumber(log.logIndex);
    const account = log.address.toLowerCase();
    const owner = byHash.get(owners[logIndex - tx.firstLogIndex] ?? '');
    const op = owner?.sender === account ? owner : validatedBy(userOps, account, logIndex);
    if (!op) continue;
    events.push({
      blockNumber: tx.blockNumber,
      logIndex,
      txHash: tx.txHash,
      blockTime: tx.blockTime,
      userOpHash: op.userOpHash,
      account,
      installed: log.topics[0] === TOPICS.moduleInstalled,
      ...decoded,
    });
  }
  return events;
}

/**
 * The op of `sender` whose validation the log at `logIndex` is part of: validation precedes
 * execution, so it is the sender's op whose execution slice starts first after the log (a bundle
 * nested in an op's execution validates inside that op's slice, before its own ops' slices), and
 * the log precedes the execution of every op of that op's bundle (else another op's execution
 * emitted it, calling into the account).
 */
function validatedBy(userOps: readonly DecodedUserOp[], sender: string, logIndex: number): DecodedUserOp | null {
  let found: DecodedUserOp | null = null;
  for (const op of userOps) {
    if (op.sender !== sender || op.execLogFrom <= logIndex) continue;
    if (!found || op.execLogFrom < found.execLogFrom) found = op;
  }
  const executing = (op: DecodedUserOp) => op.bundleIndex === found?.bundleIndex && op.execLogFrom <= logIndex;
  return found && !userOps.some(executing) ? found : null;
}
