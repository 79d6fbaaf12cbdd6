/**
 * Token transfers in a bundle transaction's logs: ERC-20 and ERC-721 `Transfer` (told apart by
 * the token id being indexed: 4 topics), ERC-1155 `TransferSingle` and `TransferBatch` (one row
 * per id, numbered by batchIndex).
 */
import { AbiCoder } from 'ethers';
import { dataWord, wordToAddress, wordToBigInt } from './abi.js';
import { hexToNumber, type RpcLog } from './chainTypes.js';
import { TOPICS } from '../../shared/chain/constants.js';

export type TokenStandard = 'ERC20' | 'ERC721' | 'ERC1155';

export type LogTransfer = {
  logIndex: number;
  batchIndex: number;
  standard: TokenStandard;
  token: string;
  from: string;
  to: string;
  value: bigint;
  tokenId: bigint | null;
};

const abi = AbiCoder.defaultAbiCoder();

/** The transfers `log` records ([] for any other log, or a malformed one). */
export function transfersOf(log: RpcLog): LogTransfer[] {
  const [topic0, t1, t2, t3] = log.topics;
  // Most logs of a bundle are not transfers: leave before building anything.
  if (topic0 !== TOPICS.transfer && topic0 !== TOPICS.transferSingle && topic0 !== TOPICS.transferBatch) return [];
  const base = { logIndex: hexToNumber(log.logIndex), batchIndex: 0, token: log.address.toLowerCase() };
  try {
    if (topic0 === TOPICS.transfer && t1 && t2) {
      if (log.topics.length === 3 && log.data.length === 66) {
        return [
          {
            ...base,
            standard: 'ERC20',
            from: wordToAddress(t1),
            to: wordToAddress(t2),
            value: wordToBigInt(dataWord(log.data, 0)),
            tokenId: null,
          },
        ];
      }
      if (log.topics.length === 4 && t3) {
        return [
          { ...base, standard: 'ERC721', from: wordToAddress(t1), to: wordToAddress(t2), value: 1n, tokenId: wordToBigInt(t3.slice(2)) },
        ];
      }
      return [];
    }
    if (topic0 === TOPICS.transferSingle && t2 && t3 && log.data.length === 130) {
      return [
        {
          ...base,
          standard: 'ERC1155',
          from: wordToAddress(t2),
          to: wordToAddress(t3),
          tokenId: wordToBigInt(dataWord(log.data, 0)),
          value: wordToBigInt(dataWord(log.data, 1)),
        },
      ];
    }
    if (topic0 === TOPICS.transferBatch && t2 && t3) {
      const [ids, values] = abi.decode(['uint256[]', 'uint256[]'], log.data) as unknown as [bigint[], bigint[]];
      return ids.map((id, i) => ({
        ...base,
        batchIndex: i,
        standard: 'ERC1155' as const,
        from: wordToAddress(t2),
        to: wordToAddress(t3),
        tokenId: BigInt(id),
        value: BigInt(values[i] ?? 0n),
      }));
    }
  } catch {
    // A contract emitting a same-named event with another layout: not a token transfer.
  }
  return [];
}
