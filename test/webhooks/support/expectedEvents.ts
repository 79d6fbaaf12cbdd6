import type { GroundTruth } from '../../../devnet/index.js';

/**
 * What webhooks must receive, from the devnet's ground truth alone (the filters of docs/webhooks.md),
 * for the webhook tests and the fault suite.
 */

/** The value seen most often (ties: the first). */
export function mostCommon(values: Array<string | null>): string {
  const counts = new Map<string, number>();
  for (const v of values) if (v) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}

/** The part of a ground truth (the devnet's, or a simulated range's) that says which events a filter sends. */
export type EventTruth = Pick<GroundTruth, 'userOps' | 'accounts' | 'transfers'>;

/** What each filter should deliver, from the ground truth alone. */
export function expectedEvents(truth: EventTruth, filter: string, x: string): Set<string> {
  const out = new Set<string>();
  const partiesOf = (hash: string) => truth.transfers.filter((t) => t.userOpHash === hash).flatMap((t) => [t.from, t.to]);
  const accountsOf = new Set(truth.accounts.filter((a) => a.factory === x).map((a) => a.address));
  for (const op of truth.userOps) {
    const hit =
      (filter === 'ADDRESS' && [op.sender, ...op.calls.map((c) => c.target), ...partiesOf(op.userOpHash)].includes(x)) ||
      (filter === 'PAYMASTER' && op.paymaster === x) ||
      (filter === 'BUNDLER' && op.bundler === x) ||
      (filter === 'FACTORY' && accountsOf.has(op.sender));
    if (hit) out.add(`user_operation:${op.userOpHash}`);
  }
  for (const a of truth.accounts) {
    if ((filter === 'FACTORY' && a.factory === x) || (filter === 'ADDRESS' && a.address === x)) out.add(`account_deployed:${a.userOpHash}`);
  }
  return out;
}
