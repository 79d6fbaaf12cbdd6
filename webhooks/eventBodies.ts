import type { CanonicalOp } from '../shared/db/tables/webhookOps.js';
import { serializeEnvelope, type WebhookEnvelope } from '../shared/webhookEnvelope.js';
import type { AccountDeployedEvent, ReorgEvent, UserOperationEvent } from './chainEvents.js';

/**
 * The `data` of each event type, and the serialised body of one delivery. Pure. Chain events carry
 * block, transaction, bundle index and log index, so receivers can order what arrives unordered.
 */

export type Addressee = { deliveryId: string; webhookId: string; chainId: number; network: string };

const blockOf = (op: CanonicalOp) => ({
  number: Number(op.userOp.blockNumber),
  hash: op.blockHash,
  timestamp: op.blockTime,
});

const isoOf = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

function envelope(to: Addressee, type: WebhookEnvelope['type'], timestamp: string, data: Record<string, unknown>): string {
  return serializeEnvelope({
    type,
    id: to.deliveryId,
    timestamp,
    chainId: to.chainId,
    network: to.network,
    webhookId: to.webhookId,
    data,
  });
}

export function userOperationBody(to: Addressee, event: UserOperationEvent, op: CanonicalOp): string {
  return envelope(to, 'user_operation', isoOf(op.blockTime), {
    userOp: op.userOp,
    block: blockOf(op),
    transaction: { hash: event.transactionHash },
    bundleIndex: event.bundleIndex,
    logIndex: event.logIndex,
  });
}

export function accountDeployedBody(to: Addressee, event: AccountDeployedEvent, op: CanonicalOp): string {
  return envelope(to, 'account_deployed', isoOf(op.blockTime), {
    account: event.account,
    factory: event.factory,
    paymaster: event.paymaster,
    userOpHash: event.userOpHash,
    // The deployed account is the op's sender: its implementation as known when the body was built.
    implementation: op.userOp.implementation,
    block: blockOf(op),
    transaction: { hash: event.transactionHash },
    bundleIndex: op.userOp.bundleIndex,
    logIndex: event.logIndex,
  });
}

/**
 * Tells a webhook that ops it was sent are no longer on the chain (they may come back in new blocks);
 * `beyondFinality` when blocks past the network's finality depth left it.
 */
export function reorgBody(to: Addressee, event: ReorgEvent, userOpHashes: string[], now: Date): string {
  return envelope(to, 'reorg', now.toISOString(), {
    commonAncestor: event.commonAncestor,
    removedFromBlock: event.removedFromBlock,
    userOpHashes,
    beyondFinality: event.beyondFinality,
  });
}
