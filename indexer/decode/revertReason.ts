/**
 * Human-readable revert messages from raw revert data: Error(string), Panic(uint256), and v0.8
 * BaseAccount's ExecuteError(uint256 index, bytes inner) unwrapped. Anything else is named by its
 * selector; empty data has no message. The raw bytes are always stored too (`revertReason`); an
 * Error(string)'s text is kept under the rule for text from the chain (shared/chainText.ts).
 */
import { argumentsOf } from '../../shared/calldata/hexAbi.js';
import { storableTextFromUtf8 } from '../../shared/chainText.js';

const ERROR_STRING = '0x08c379a0';
const PANIC = '0x4e487b71';
const EXECUTE_ERROR = '0x5a154675';

/** Solidity panic codes. @see https://docs.soliditylang.org/en/latest/control-structures.html#panic-via-assert-and-error-via-require */
const PANIC_REASONS: Record<number, string> = {
  0x00: 'generic compiler panic',
  0x01: 'assertion failed',
  0x11: 'arithmetic overflow or underflow',
  0x12: 'division or modulo by zero',
  0x21: 'invalid enum value',
  0x22: 'invalid storage byte array encoding',
  0x31: 'pop on empty array',
  0x32: 'array index out of bounds',
  0x41: 'out of memory',
  0x51: 'call to uninitialised function',
};

/** The readable start of an Error(string) whose data was cut (offset word, length word, then UTF-8). */
function truncatedErrorString(data: string): string | null {
  const text = data.slice(10 + 128);
  if (text.length === 0) return null;
  return `${storableTextFromUtf8(text.slice(0, text.length - (text.length % 2)))}… (truncated)`;
}

/**
 * Read on the hex itself (shared/calldata/hexAbi.ts): ethers' AbiCoder was 4% of a backfill's CPU
 * on a chain where many ops revert.
 */
export function decodeRevertMessage(data: string | null, depth = 0): string | null {
  if (!data || data.length < 10) return null;
  const selector = data.slice(0, 10).toLowerCase();
  try {
    const args = argumentsOf(data);
    if (selector === ERROR_STRING) return storableTextFromUtf8(args.bytes(0, 0));
    if (selector === PANIC) {
      const code = Number(args.uint(0));
      return `Panic(0x${code.toString(16).padStart(2, '0')}): ${PANIC_REASONS[code] ?? 'unknown panic code'}`;
    }
    if (selector === EXECUTE_ERROR && depth < 4) {
      const innerMessage = decodeRevertMessage(args.bytes(0, 32), depth + 1);
      return `call ${args.uint(0)} reverted${innerMessage ? `: ${innerMessage}` : ''}`;
    }
  } catch {
    // v0.7+ cuts reasons at 2048 bytes: show what survived of a cut Error(string).
    if (selector === ERROR_STRING) return truncatedErrorString(data);
  }
  return `custom error ${selector}`;
}
