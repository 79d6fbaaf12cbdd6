/**
 * Names the implementation each new account runs (accounts.implementation), off the hot path: the
 * indexer runs a slice of this pass when it reaches the head, never while a range is being indexed,
 * and an account is read once (null → a name or 'unknown'; a reorg rebuilds the row, which is then
 * read again). A pass that fails (the node does not answer) leaves the rows null: the next pass
 * retries them.
 *
 * What is read, at the end of the block the account was first seen in (its deployment's, else its
 * first op's), in one JSON-RPC batch per slice of accounts — 6 calls per account:
 * - eth_getCode: an EIP-7702 delegation designator (0xef0100 ‖ delegate), an EIP-1167 clone (the
 *   implementation is in the code), a Safe proxy (its code answers masterCopy(), 0xa619486e), or
 *   the account's own code (Trust's Barz, a diamond);
 * - the ERC-1967 implementation slot (SimpleAccount, LightAccount, Kernel v2 and v3, Nexus,
 *   Etherspot, OpenZeppelin-style proxies);
 * - slot 0 (a Safe's singleton), and Safe's fallback-handler slot (the Safe4337Module, or
 *   Rhinestone's Safe7579 adapter, is the fallback handler of a Safe that uses it);
 * - slot `address(this)` (Biconomy Smart Account v2's proxy keeps its implementation there);
 * - eth_call accountId() (ERC-7579 accounts that report their vendor and version).
 * Then, only for implementations (or delegates, singletons, modules) not known by address: one
 * eth_getCode each, to match their code hash; hashes are remembered for the process's life, so an
 * implementation is read once however many accounts run it.
 */
import {
  UNKNOWN_IMPLEMENTATION,
  accountCodeName,
  accountIdName,
  factoryHint,
  implementationCodeHash,
  implementationName,
  safeModuleName,
  safeName,
  safeSingletonName,
  type ContractSeen,
} from '../../shared/accountImplementations.js';
import type { Db } from '../../shared/db/client.js';
import * as accounts from '../../shared/db/tables/accounts.js';
import type { UnnamedAccount } from '../../shared/db/tables/accounts.js';
import type { Logger } from '../../shared/log.js';
import type { RpcClient, RpcRequest } from './rpcClient.js';

const ERC1967_IMPLEMENTATION_SLOT = '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';
/** keccak256("fallback_manager.handler.address") (Safe's FallbackManager). */
const SAFE_FALLBACK_HANDLER_SLOT = '0x6c9a6c4a39284e37ed1cf53d337577d14212a4870fb976a4366c693b939918d5';
const ACCOUNT_ID_SELECTOR = '0x9cfd7cff';
/** Safe proxies answer masterCopy() themselves: its selector is in their code. */
const SAFE_PROXY_MARK = 'a619486e';
const DELEGATION = /^0xef0100([0-9a-f]{40})$/;
const MINIMAL_PROXY = /^0x363d3d373d3d3d363d73([0-9a-f]{40})5af43d82803e903d91602b57fd5bf3$/;
/** Calls per account in the first round (see the module comment). */
export const CALLS_PER_ACCOUNT = 6;

/** What the first round read of one account (null: no answer, e.g. a node without eth_getStorageAt). */
export type AccountState = {
  address: string;
  factory: string | null;
  code: string | null;
  erc1967Slot: string | null;
  slot0: string | null;
  selfSlot: string | null;
  fallbackHandlerSlot: string | null;
  accountId: string | null;
};

/** An address held in a storage word (12 zero bytes, then a non-zero address), else null. */
function addressInWord(word: string | null): string | null {
  if (!word || !/^0x0{24}[0-9a-f]{40}$/i.test(word)) return null;
  const address = `0x${word.slice(-40).toLowerCase()}`;
  return /^0x0{40}$/.test(address) ? null : address;
}

function decodeAccountId(answer: string | null): string | null {
  if (!answer || answer.length < 130) return null;
  try {
    const length = Number(BigInt(`0x${answer.slice(66, 130)}`));
    if (length === 0 || length > 200) return null;
    const text = Buffer.from(answer.slice(130, 130 + length * 2), 'hex').toString('utf8');
    return /^[\x20-\x7e]+$/.test(text) ? text : null;
  } catch {
    return null;
  }
}

/**
 * The name the state gives, with `codeHashOf` answering the masked code hash of a contract read in
 * the second round (undefined: not read yet). `wanted` collects the addresses whose code would
 * settle the name; a result with `wanted` non-empty is provisional.
 */
export function nameFromState(
  s: AccountState,
  codeHashOf: (address: string) => string | null | undefined,
): { name: string; wanted: string[] } {
  const wanted: string[] = [];
  const seen = (address: string | null): ContractSeen | null => {
    if (address === null) return null;
    const codeHash = codeHashOf(address);
    if (codeHash === undefined) wanted.push(address);
    return { address, codeHash: codeHash ?? null };
  };
  const pick = (...names: Array<string | null>): string => names.find((n) => n !== null) ?? UNKNOWN_IMPLEMENTATION;
  const code = s.code?.toLowerCase() ?? null;
  if (code === null || code === '0x') return { name: UNKNOWN_IMPLEMENTATION, wanted };
  const byAccountId = accountIdName(s.accountId);

  const delegate = DELEGATION.exec(code)?.[1] ?? MINIMAL_PROXY.exec(code)?.[1];
  if (delegate) return { name: pick(implementationName(seen(`0x${delegate}`)), byAccountId, factoryHint(s.factory)), wanted };

  // The account's own code: a contract that is its own implementation (the address is the account's,
  // which the masking zeroes).
  const own = accountCodeName({ address: s.address, codeHash: implementationCodeHash(code, s.address) });
  if (own) return { name: own, wanted };

  if (code.includes(SAFE_PROXY_MARK)) {
    const singleton = safeSingletonName(seen(addressInWord(s.slot0)));
    if (singleton) {
      const handler = addressInWord(s.fallbackHandlerSlot);
      return { name: safeName(singleton, handler === null ? null : safeModuleName(seen(handler))), wanted };
    }
  }

  const proxied = [addressInWord(s.erc1967Slot), addressInWord(s.selfSlot)].filter((a): a is string => a !== null);
  const byImplementation = proxied.map((a) => implementationName(seen(a)));
  return { name: pick(...byImplementation, byAccountId, factoryHint(s.factory)), wanted };
}

/** Reads and names a slice of accounts; code hashes of implementations are kept in `codeHashes`. */
export async function identifyAccounts(
  rpc: RpcClient,
  slice: Array<UnnamedAccount & { blockTag: string }>,
  codeHashes: Map<string, string | null>,
): Promise<Array<{ address: string; implementation: string }>> {
  const requests: RpcRequest[] = slice.flatMap(({ address, blockTag }) => [
    { method: 'eth_getCode', params: [address, blockTag] },
    { method: 'eth_getStorageAt', params: [address, ERC1967_IMPLEMENTATION_SLOT, blockTag] },
    { method: 'eth_getStorageAt', params: [address, '0x0', blockTag] },
    { method: 'eth_getStorageAt', params: [address, `0x${address.slice(2).padStart(64, '0')}`, blockTag] },
    { method: 'eth_getStorageAt', params: [address, SAFE_FALLBACK_HANDLER_SLOT, blockTag] },
    { method: 'eth_call', params: [{ to: address, data: ACCOUNT_ID_SELECTOR }, blockTag] },
  ]);
  // A failure retrying cannot change (no such method, a revert) leaves that value unread.
  const answers = await rpc.batchSettled<string>(requests, (r) => typeof r === 'string');
  const states: AccountState[] = slice.map((a, i) => {
    const at = (k: number): string | null => {
      const answer = answers[i * CALLS_PER_ACCOUNT + k];
      return answer?.ok ? answer.value.toLowerCase() : null;
    };
    return {
      address: a.address,
      factory: a.factory,
      code: at(0),
      erc1967Slot: at(1),
      slot0: at(2),
      selfSlot: at(3),
      fallbackHandlerSlot: at(4),
      accountId: decodeAccountId(at(5)),
    };
  });

  const hashOf = (address: string) => codeHashes.get(address);
  const first = states.map((s) => nameFromState(s, hashOf));
  // The second round: the code of what is not known by address, read at the newest block asked
  // (an implementation's code does not change; where it did, the newer one is what accounts run).
  const wanted = [...new Set(first.flatMap((r) => r.wanted))].filter((a) => !codeHashes.has(a));
  if (wanted.length > 0) {
    const codes = await rpc.batchSettled<string>(
      wanted.map((a) => ({ method: 'eth_getCode', params: [a, 'latest'] })),
      (r) => typeof r === 'string',
    );
    wanted.forEach((a, i) => {
      const c = codes[i]!;
      codeHashes.set(a, c.ok && c.value !== '0x' ? implementationCodeHash(c.value, a) : null);
    });
  }
  return states.map((s, i) => ({
    address: s.address,
    implementation: first[i]!.wanted.length === 0 ? first[i]!.name : nameFromState(s, hashOf).name,
  }));
}

/** complete: none waits; stalled: the node answered nothing, even at the latest block (the next pass tries again). */
export type NamingResult = { named: number; unknown: number; complete: boolean; stalled: boolean };

/**
 * What a network's naming passes keep between them: the implementations' code hashes, and whether
 * accounts are read at the latest block because the node could not answer at theirs (a node that
 * keeps no old state: its errors are retried by the client, then given up — a price paid once).
 */
export type NamingMemory = { codeHashes: Map<string, string | null>; readAtLatest: boolean };

/** Names accounts `sliceSize` at a time until none waits or `shouldStop()`. */
export async function nameAccounts(deps: {
  db: Db;
  rpc: RpcClient;
  chainId: number;
  log: Logger;
  sliceSize: number;
  memory: NamingMemory;
  shouldStop: () => boolean;
}): Promise<NamingResult> {
  const { memory } = deps;
  const result: NamingResult = { named: 0, unknown: 0, complete: false, stalled: false };
  while (!deps.shouldStop()) {
    const unnamed = await accounts.listUnnamed(deps.db, deps.chainId, deps.sliceSize);
    if (unnamed.length === 0) {
      result.complete = true;
      break;
    }
    const slice = unnamed.map((a) => ({ ...a, blockTag: memory.readAtLatest ? 'latest' : `0x${a.block.toString(16)}` }));
    let named: Array<{ address: string; implementation: string }>;
    try {
      named = await identifyAccounts(deps.rpc, slice, memory.codeHashes);
    } catch (err) {
      if (memory.readAtLatest) {
        deps.log.warn({ err: (err as Error).message, accounts: slice.length }, 'could not read accounts to name them; retrying next pass');
        result.stalled = true;
        break;
      }
      memory.readAtLatest = true;
      deps.log.warn(
        { err: (err as Error).message },
        'the node did not answer for the blocks accounts were first seen in: naming them from the latest block on',
      );
      continue;
    }
    await accounts.setImplementations(deps.db, deps.chainId, named);
    for (const n of named) {
      if (n.implementation === UNKNOWN_IMPLEMENTATION) result.unknown++;
      else result.named++;
    }
  }
  return result;
}
