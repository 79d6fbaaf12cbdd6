/**
 * The indexer's outbox events, typed by the contract the dispatcher parses them with
 * (shared/outboxEvents.ts): one `user_operation` per new op, one `account_deployed` per op that
 * deployed its sender, in chain order; `reorg` when rows above a common ancestor were removed.
 * Addresses lower-case.
 */
import type { NewOutboxEvent } from '../../shared/outboxEvents.js';
import type { DecodedTransfer, DecodedUserOp } from '../decode/decodedBatch.js';
import { ZERO_ADDRESS } from '../../shared/chain/constants.js';

/**
 * @param senderFactories factories of senders deployed by an AccountDeployed indexed earlier
 */
export function opEvents(newOps: DecodedUserOp[], transfers: DecodedTransfer[], senderFactories: Map<string, string>): NewOutboxEvent[] {
  const parties = new Map<string, Set<string>>();
  for (const t of transfers) {
    if (!t.userOpHash) continue;
    let set = parties.get(t.userOpHash);
    if (!set) parties.set(t.userOpHash, (set = new Set()));
    set.add(t.from).add(t.to);
  }
  const deployedHere = new Map(newOps.filter((o) => o.factory).map((o) => [o.sender, o.factory!]));
  const events: Array<NewOutboxEvent & { logIndex: number }> = [];
  for (const op of newOps) {
    const transferParties = [...(parties.get(op.userOpHash) ?? [])].filter((a) => a !== ZERO_ADDRESS);
    events.push({
      type: 'user_operation',
      blockNumber: op.blockNumber,
      userOpHash: op.userOpHash,
      logIndex: op.logIndex,
      payload: {
        userOpHash: op.userOpHash,
        sender: op.sender,
        paymaster: op.paymaster,
        bundler: op.bundler,
        beneficiary: op.beneficiary,
        factory: op.factory ?? deployedHere.get(op.sender) ?? senderFactories.get(op.sender) ?? null,
        targets: [...new Set(op.calls.map((c) => c.target))],
        transferParties,
        blockNumber: op.blockNumber,
        blockHash: op.blockHash,
        transactionHash: op.txHash,
        bundleIndex: op.bundleIndex,
        logIndex: op.logIndex,
      },
    });
    if (op.factory && op.deployedLogIndex !== null) {
      events.push({
        type: 'account_deployed',
        blockNumber: op.blockNumber,
        userOpHash: op.userOpHash,
        logIndex: op.deployedLogIndex,
        payload: {
          userOpHash: op.userOpHash,
          account: op.sender,
          factory: op.factory,
          paymaster: op.paymaster,
          blockNumber: op.blockNumber,
          blockHash: op.blockHash,
          transactionHash: op.txHash,
          logIndex: op.deployedLogIndex,
        },
      });
    }
  }
  events.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return events.map(({ logIndex: _, ...e }) => e);
}

export function reorgEvent(
  commonAncestor: number,
  removedUserOpHashes: string[],
  removedAccounts: string[],
  beyondFinality = false,
): NewOutboxEvent {
  return {
    type: 'reorg',
    blockNumber: commonAncestor,
    userOpHash: null,
    payload: { commonAncestor, removedFromBlock: commonAncestor + 1, removedUserOpHashes, removedAccounts, beyondFinality },
  };
}
