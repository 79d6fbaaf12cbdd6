/**
 * Bundles sent through another contract (a multicall, a bundler's own contract) carry their
 * handleOps calldata inside tx.input, as an ABI `bytes` argument: found there, they need no
 * debug_traceTransaction — the most expensive call a node serves, and one many providers refuse.
 * Every occurrence of a bundle selector of the bundle's EntryPoint family is decoded; a candidate
 * stands for a bundle of the logs only when it holds exactly the bundle's ops, in log order, each
 * with the userOpHash the EntryPoint logged (recomputed from the candidate: every field but the
 * signature is proven), and no other candidate does. Anything else — calldata packed or compressed
 * by the wrapper, EIP-7702 init code, two candidates for one bundle — is left to a trace.
 */
import { decoderFor } from './entryPointDecoder.js';
import type { LogBundle } from './bundleLogs.js';
import type { TracedBundleCall } from './callFrames.js';
import { userOpHashOf } from './userOpHash.js';

/** Where `selector` (0x + 8 hex) starts on a byte boundary of `input` (0x…): string indexes. */
function selectorPositions(input: string, selector: string): number[] {
  const needle = selector.slice(2);
  const positions: number[] = [];
  for (let at = input.indexOf(needle, 2); at >= 0; at = input.indexOf(needle, at + 1)) if (at % 2 === 0) positions.push(at);
  return positions;
}

function holdsBundle(call: TracedBundleCall['call'], bundle: LogBundle, chainId: number): boolean {
  if (call.ops.length !== bundle.ops.length) return false;
  return call.ops.every((op, i) => {
    const logged = bundle.ops[i]!;
    return (
      op.sender === logged.sender &&
      op.nonce === logged.nonce &&
      userOpHashOf(op, bundle.version, bundle.entryPoint, chainId) === logged.userOpHash
    );
  });
}

/**
 * The calldata of every bundle in `logBundles`, recovered from `input` and proven by the ops'
 * hashes; null when one of them cannot be (the transaction then needs a trace).
 */
export function bundlesFromInput(input: string, logBundles: LogBundle[], chainId: number): TracedBundleCall[] | null {
  if (logBundles.length === 0) return null;
  const lowered = input.toLowerCase();
  const calls: TracedBundleCall[] = [];
  for (const bundle of logBundles) {
    const decoder = decoderFor(bundle.version);
    let found: TracedBundleCall | null = null;
    for (const selector of decoder.bundleSelectors) {
      for (const at of selectorPositions(lowered, selector)) {
        let call: TracedBundleCall['call'] | null;
        try {
          call = decoder.decodeHandleOps(`0x${lowered.slice(at)}`);
        } catch {
          continue; // the selector's bytes by chance, not a call
        }
        if (!call || !holdsBundle(call, bundle, chainId)) continue;
        if (found) return null; // two candidates: which one ran only a trace can tell
        found = { entryPoint: bundle.entryPoint, call };
      }
    }
    if (!found) return null;
    calls.push(found);
  }
  return calls;
}
