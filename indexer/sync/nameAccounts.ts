/**
 * Names the implementation each new account runs (accounts.implementation), off the hot path: the
 * indexer runs a slice of this pass when it reaches the head, never while a range is being indexed,
 * and an account is read once (null → a name or 'unknown'; a reorg rebuilds the row, which is then
 * read again). A pass that fails (the node does not answer) leaves the rows null: the next pass
 * retries them.
 *
 * What is read, at the end of the block the account was first seen in (its deployment's, else its
 * first op's), in batched rounds over a slice of accounts:
 * 1. eth_getCode: an EIP-7702 delegation designator (0xef0100 ‖ delegate) or an EIP-1167 clone
 *    names the implementation in the code itself; the account's own code may be known (Trust's
 *    Barz, a diamond); a Safe proxy is recognised by masterCopy()'s selector (0xa619486e) in its code,
 *    an ERC-1967 proxy by the implementation slot's constant in its code.
 * 2. eth_getStorageAt, only the words that code calls for: a Safe's singleton (slot 0) and fallback
 *    handler (the Safe4337Module or Rhinestone's Safe7579 adapter is the fallback handler of a Safe
 *    that uses it); an ERC-1967 proxy's implementation slot (SimpleAccount, LightAccount, Kernel v2
 *    and v3, Nexus, Etherspot); for other code, that slot and slot `address(this)` (Biconomy Smart
 *    Account v2's proxy keeps its implementation there).
 * 3. eth_getCode of implementations (delegates, singletons, modules) not known by address, to match
 *    their code hash; hashes are remembered for the process's life, so an implementation is read
 *    once however many accounts run it.
 * 4. eth_call accountId(), only for accounts nothing above named (ERC-7579 accounts report vendor
 *    and version there).
 * So 1 call for a 7702 account or a clone, 2 for an ERC-1967 proxy, 3 for a Safe or Biconomy v2,
 * plus the rare round 3 and 4 calls.
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
/** What was read of one account (null: not read, or no answer, e.g. a node without eth_getStorageAt). */
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
  /** What `table` names the contract at `address`: by its address, else by its code hash (wanted when not read yet). */
  const known = (table: (c: ContractSeen) => string | null, address: string | null): string | null => {
    if (address === null) return null;
    const byAddress = table({ address, codeHash: null });
    if (byAddress !== null) return byAddress;
    const codeHash = codeHashOf(address);
    if (codeHash === undefined) wanted.push(address);
    return codeHash ? table({ address, codeHash }) : null;
  };
  const pick = (...names: Array<string | null>): string => names.find((n) => n !== null) ?? UNKNOWN_IMPLEMENTATION;
  const code = s.code?.toLowerCase() ?? null;
  if (code === null || code === '0x') return { name: UNKNOWN_IMPLEMENTATION, wanted };
  const byAccountId = accountIdName(s.accountId);

  const delegate = DELEGATION.exec(code)?.[1] ?? MINIMAL_PROXY.exec(code)?.[1];
  if (delegate) return { name: pick(known(implementationName, `0x${delegate}`), byAccountId, factoryHint(s.factory)), wanted };

  // The account's own code: a contract that is its own implementation (the address is the account's,
  // which the masking zeroes).
  const own = accountCodeName({ address: s.address, codeHash: implementationCodeHash(code, s.address) });
  if (own) return { name: own, wanted };

  if (code.includes(SAFE_PROXY_MARK)) {
    const singleton = known(safeSingletonName, addressInWord(s.slot0));
    if (singleton) {
      return { name: safeName(singleton, known(safeModuleName, addressInWord(s.fallbackHandlerSlot))), wanted };
    }
  }

  const proxied = [addressInWord(s.erc1967Slot), addressInWord(s.selfSlot)].filter((a): a is string => a !== null);
  const byImplementation = proxied.map((a) => known(implementationName, a));
  return { name: pick(...byImplementation, byAccountId, factoryHint(s.factory)), wanted };
}

/** The storage words an account's code calls for (beside the code itself). */
type SlotKey = 'erc1967Slot' | 'slot0' | 'selfSlot' | 'fallbackHandlerSlot';

const SLOT_AT: Record<SlotKey, (account: string) => string> = {
  erc1967Slot: () => ERC1967_IMPLEMENTATION_SLOT,
  slot0: () => '0x0',
  selfSlot: (account) => `0x${account.slice(2).padStart(64, '0')}`,
  fallbackHandlerSlot: () => SAFE_FALLBACK_HANDLER_SLOT,
};

/**
 * What else to read of an account, from its code: nothing for a delegation, a clone or a known
 * contract of its own; a Safe proxy's singleton and fallback handler; an ERC-1967 proxy's slot
 * (its code holds the slot's constant); for any other code, the ERC-1967 slot and Biconomy's
 * `address(this)` slot.
 */
function slotsToRead(address: string, code: string | null): SlotKey[] {
  if (code === null || code === '0x' || DELEGATION.test(code) || MINIMAL_PROXY.test(code)) return [];
  if (accountCodeName({ address, codeHash: implementationCodeHash(code, address) })) return [];
  if (code.includes(SAFE_PROXY_MARK)) return ['slot0', 'fallbackHandlerSlot'];
  if (code.includes(ERC1967_IMPLEMENTATION_SLOT.slice(2))) return ['erc1967Slot'];
  return ['erc1967Slot', 'selfSlot'];
}

/**
 * Reads and names a slice of accounts, in up to four batched rounds: the codes; the storage words
 * each code calls for; the code of implementations not known by address (kept in `codeHashes` for
 * the next slices); `accountId()` of the accounts still unknown.
 */
export async function identifyAccounts(
  rpc: RpcClient,
  slice: Array<UnnamedAccount & { blockTag: string }>,
  codeHashes: Map<string, string | null>,
): Promise<Array<{ address: string; implementation: string }>> {
  // A failure retrying cannot change (no such method, a revert) leaves that value unread (null).
  const read = async (requests: RpcRequest[]): Promise<Array<string | null>> =>
    requests.length === 0
      ? []
      : (await rpc.batchSettled<string>(requests, (r) => typeof r === 'string')).map((a) => (a.ok ? a.value.toLowerCase() : null));

  const codes = await read(slice.map(({ address, blockTag }) => ({ method: 'eth_getCode', params: [address, blockTag] })));
  const states: AccountState[] = slice.map((a, i) => ({
    address: a.address,
    factory: a.factory,
    code: codes[i]!,
    erc1967Slot: null,
    slot0: null,
    selfSlot: null,
    fallbackHandlerSlot: null,
    accountId: null,
  }));

  const slots = slice.flatMap((a, i) => slotsToRead(a.address, states[i]!.code).map((key) => ({ i, key })));
  const words = await read(
    slots.map(({ i, key }) => ({
      method: 'eth_getStorageAt',
      params: [slice[i]!.address, SLOT_AT[key](slice[i]!.address), slice[i]!.blockTag],
    })),
  );
  slots.forEach(({ i, key }, k) => (states[i]![key] = words[k]!));

  // The code of what is not known by address, read at the newest block (an implementation's code
  // does not change; where it did, the newer one is what accounts run).
  const hashOf = (address: string) => codeHashes.get(address);
  const wanted = [...new Set(states.flatMap((s) => nameFromState(s, hashOf).wanted))];
  const implementationCodes = await read(wanted.map((a) => ({ method: 'eth_getCode', params: [a, 'latest'] })));
  wanted.forEach((a, i) => {
    const code = implementationCodes[i];
    codeHashes.set(a, code && code !== '0x' ? implementationCodeHash(code, a) : null);
  });

  // accountId() only where the code named nothing (an ERC-7579 account reporting its version); it
  // ranks above the factory hint.
  const asked = states.flatMap((s, i) =>
    s.code && s.code !== '0x' && nameFromState({ ...s, factory: null }, hashOf).name === UNKNOWN_IMPLEMENTATION ? [i] : [],
  );
  const accountIds = await read(
    asked.map((i) => ({ method: 'eth_call', params: [{ to: slice[i]!.address, data: ACCOUNT_ID_SELECTOR }, slice[i]!.blockTag] })),
  );
  asked.forEach((i, k) => (states[i]!.accountId = decodeAccountId(accountIds[k]!)));
  return states.map((s) => ({ address: s.address, implementation: nameFromState(s, hashOf).name }));
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
