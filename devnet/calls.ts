/**
 * Account callData: the execute/executeBatch shapes of each account family. Each SimpleAccount
 * version has its own executeBatch (checked against the packages' ABIs in the devnet test):
 *   v0.6  executeBatch(address[],bytes[])            no values at all
 *   v0.7  executeBatch(address[],uint256[],bytes[])  an empty value array means all zero
 *   v0.8  executeBatch((address,uint256,bytes)[])    BaseAccount `Call` structs; our MiniAccount too
 */
import { Interface } from 'ethers';

export type AccountFamily = 'simple-v0.6' | 'simple-v0.7' | 'simple-v0.8' | 'mini';

export type AccountCall = { target: string; value: bigint; data: string };

export const EXECUTE_SIGNATURE = 'execute(address,uint256,bytes)';
export const EXECUTE_BATCH_SIGNATURES: Record<AccountFamily, string> = {
  'simple-v0.6': 'executeBatch(address[],bytes[])',
  'simple-v0.7': 'executeBatch(address[],uint256[],bytes[])',
  'simple-v0.8': 'executeBatch((address,uint256,bytes)[])',
  mini: 'executeBatch((address,uint256,bytes)[])',
};

const interfaces = Object.fromEntries(
  Object.entries(EXECUTE_BATCH_SIGNATURES).map(([family, batch]) => [
    family,
    new Interface([`function ${EXECUTE_SIGNATURE}`, `function ${batch}`]),
  ]),
) as Record<AccountFamily, Interface>;

/** v0.6 SimpleAccount's executeBatch cannot send ETH. */
export function batchCanSendValue(family: AccountFamily): boolean {
  return family !== 'simple-v0.6';
}

/** `execute` for one call, `executeBatch` otherwise (or when `batch` asks for it even with one call). */
export function encodeExecution(family: AccountFamily, calls: AccountCall[], batch: boolean): string {
  const iface = interfaces[family];
  const first = calls[0];
  if (!batch) {
    if (calls.length !== 1 || !first) throw new Error('execute takes exactly one call');
    return iface.encodeFunctionData('execute', [first.target, first.value, first.data]);
  }
  if (family === 'simple-v0.6') {
    if (calls.some((c) => c.value !== 0n)) throw new Error('v0.6 SimpleAccount executeBatch cannot carry value');
    return iface.encodeFunctionData('executeBatch', [calls.map((c) => c.target), calls.map((c) => c.data)]);
  }
  if (family === 'simple-v0.7') {
    const values = calls.some((c) => c.value !== 0n) ? calls.map((c) => c.value) : [];
    return iface.encodeFunctionData('executeBatch', [calls.map((c) => c.target), values, calls.map((c) => c.data)]);
  }
  return iface.encodeFunctionData('executeBatch', [calls.map((c) => [c.target, c.value, c.data])]);
}
