/**
 * Each bundle's share of its transaction's fee, so that a bundle's profit (its ops' actualGasCost
 * less its share) adds up to the transaction's over its bundles. One bundle takes the whole fee;
 * several split it in proportion to their revenue (equal parts when none collected anything),
 * rounded down, the last taking what rounding leaves. The bundles' `fee_share` column holds it; the
 * migration that added that column computes the stored rows' shares by the same rule in SQL.
 */
export function feeShares(fee: bigint, revenues: readonly bigint[]): bigint[] {
  const total = revenues.reduce((sum, r) => sum + r, 0n);
  const shares = revenues.map((r) => (total > 0n ? (fee * r) / total : fee / BigInt(revenues.length)));
  const last = shares.length - 1;
  if (last >= 0) shares[last] = fee - shares.slice(0, last).reduce((sum, s) => sum + s, 0n);
  return shares;
}
