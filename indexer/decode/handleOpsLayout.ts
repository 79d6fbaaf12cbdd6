/**
 * The layout shared by every EntryPoint version's bundle calls: handleOps(Op[] ops, address
 * beneficiary) and handleAggregatedOps((Op[] userOps, address aggregator, bytes signature)[],
 * address beneficiary). Only the Op struct differs per version (`readOp`).
 */
import type { CalldataOp, HandleOpsCall } from './entryPointDecoder.js';
import { argumentsOf, type HexReader } from '../../shared/calldata/hexAbi.js';

export type OpReader = (r: HexReader, p: number, aggregator: string | null, opIndex: number) => CalldataOp;

/** handleOps(UserOperation[],address) / handleAggregatedOps((UserOperation[],address,bytes)[],address). */
export function readBundleCall(input: string, aggregated: boolean, readOneOp: OpReader): HandleOpsCall {
  const r = argumentsOf(input);
  const beneficiary = r.address(32);
  const ops: CalldataOp[] = [];
  const readOps = (base: number, headOffset: number, aggregator: string | null): void => {
    const list = r.array(base, headOffset);
    for (let i = 0; i < list.length; i++) ops.push(readOneOp(r, r.dynamicItem(list.start, i), aggregator, ops.length));
  };
  if (!aggregated) {
    readOps(0, 0, null);
  } else {
    const groups = r.array(0, 0);
    for (let g = 0; g < groups.length; g++) {
      const group = r.dynamicItem(groups.start, g);
      readOps(group, group, r.address(group + 32));
    }
  }
  return { beneficiary, aggregated, ops };
}
