/** v0.6 EntryPoint calldata: the unpacked `UserOperation` struct. @see research/indexer.md §1.4 */
import type { Result } from 'ethers';
import { ENTRY_POINT_V06, SELECTORS } from './abi.js';
import type { CalldataOp, EntryPointDecoder, HandleOpsCall } from './entryPointDecoder.js';

function toOp(s: Result, aggregator: string | null, opIndex: number): CalldataOp {
  return {
    sender: String(s[0]).toLowerCase(),
    nonce: s[1] as bigint,
    initCode: String(s[2]),
    callData: String(s[3]),
    callGasLimit: s[4] as bigint,
    verificationGasLimit: s[5] as bigint,
    preVerificationGas: s[6] as bigint,
    maxFeePerGas: s[7] as bigint,
    maxPriorityFeePerGas: s[8] as bigint,
    paymasterAndData: String(s[9]),
    signature: String(s[10]),
    paymasterVerificationGasLimit: null,
    paymasterPostOpGasLimit: null,
    accountGasLimits: null,
    gasFees: null,
    aggregator,
    opIndex,
  };
}

export const entryPointV06: EntryPointDecoder = {
  bundleSelectors: [SELECTORS.handleOpsV06, SELECTORS.handleAggregatedOpsV06],
  innerHandleOpSelector: SELECTORS.innerHandleOpV06,

  decodeHandleOps(input: string): HandleOpsCall | null {
    const selector = input.slice(0, 10).toLowerCase();
    if (selector === SELECTORS.handleOpsV06) {
      const [ops, beneficiary] = ENTRY_POINT_V06.decodeFunctionData('handleOps', input);
      return {
        beneficiary: String(beneficiary).toLowerCase(),
        aggregated: false,
        ops: (ops as Result[]).map((s, i) => toOp(s, null, i)),
      };
    }
    if (selector === SELECTORS.handleAggregatedOpsV06) {
      const [groups, beneficiary] = ENTRY_POINT_V06.decodeFunctionData('handleAggregatedOps', input);
      const ops: CalldataOp[] = [];
      for (const group of groups as Result[]) {
        const aggregator = String(group[1]).toLowerCase();
        for (const s of group[0] as Result[]) ops.push(toOp(s, aggregator, ops.length));
      }
      return { beneficiary: String(beneficiary).toLowerCase(), aggregated: true, ops };
    }
    return null;
  },

  innerHandleOpHash(input: string): string | null {
    if (input.slice(0, 10).toLowerCase() !== SELECTORS.innerHandleOpV06) return null;
    const [, opInfo] = ENTRY_POINT_V06.decodeFunctionData('innerHandleOp', input);
    return String((opInfo as Result)[1]).toLowerCase();
  },
};
