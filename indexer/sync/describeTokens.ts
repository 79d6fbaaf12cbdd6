/**
 * Token metadata (name, symbol, decimals) by eth_call, read once per token: a token that answers
 * nothing (no such function, or a revert) keeps nulls. Old tokens (MKR) return bytes32 strings.
 * Names and symbols are whatever the contract chose to return: they are kept under the rule for
 * text from the chain (shared/chainText.ts), so a NUL or a byte that is not UTF-8 is stored too.
 */
import { HexReader } from '../../shared/calldata/hexAbi.js';
import { storableTextFromUtf8 } from '../../shared/chainText.js';
import type { TokenMetadata } from '../decode/decodedBatch.js';
import type { TokenStandard } from '../decode/transfers.js';
import type { RpcClient } from './rpcClient.js';

const CALLS = { name: '0x06fdde03', symbol: '0x95d89b41', decimals: '0x313ce567' } as const;

/** An ABI `string`, or a `bytes32` padded with NULs (its NULs go with the rule); null for anything else. */
export function decodeString(hex: string | undefined): string | null {
  if (!hex || hex === '0x') return null;
  if (hex.length === 66) return storableTextFromUtf8(hex) || null;
  try {
    return storableTextFromUtf8(HexReader.of(hex).bytes(0, 0));
  } catch {
    return null;
  }
}

function decodeDecimals(hex: string | undefined): number | null {
  if (!hex || hex.length < 66) return null;
  const value = BigInt(hex.slice(0, 66));
  return value <= 255n ? Number(value) : null;
}

export async function describeTokens(
  rpc: RpcClient,
  tokens: Array<{ address: string; standard: TokenStandard }>,
): Promise<TokenMetadata[]> {
  const requests = tokens.flatMap((t) =>
    Object.values(CALLS).map((data) => ({ method: 'eth_call', params: [{ to: t.address, data }, 'latest'] })),
  );
  const answers = await rpc.batchSettled<string>(requests, (r) => typeof r === 'string');
  return tokens.map((t, i) => {
    const at = (k: number): string | undefined => {
      const a = answers[i * 3 + k];
      return a?.ok ? a.value : undefined;
    };
    return {
      address: t.address,
      standard: t.standard,
      name: decodeString(at(0)),
      symbol: decodeString(at(1)),
      decimals: t.standard === 'ERC20' ? decodeDecimals(at(2)) : null,
    };
  });
}
