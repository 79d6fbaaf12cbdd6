/**
 * The wallet vendors' own account contracts — Kernel v2.1-v2.4 and v3.0-v3.3, Biconomy v2, Nexus,
 * LightAccount v1.1.0 and v2.0.0, Safe's ERC-7579 adapter and launchpad, Thirdweb, Trust, Etherspot,
 * Coinbase Smart Wallet v1 — with their factories, validators and modules at their mainnet
 * addresses, deployed by replaying two recipes in devnet/contracts/: realaccounts.json, 96 JSON-RPC
 * calls recorded from permissionless' test environment (MIT, LICENSE-permissionless-MIT beside it),
 * whose to…SmartAccount functions default to these addresses; and coinbase-smart-wallet.json, the
 * Coinbase implementation and factory CREATE2-deployed through Safe's singleton factory with the
 * vendor's salts and init code byte-identical to its mainnet deployment (MIT; the licences and
 * NOTICE-coinbase-smart-wallet beside it), the addresses viem's toCoinbaseSmartAccount uses.
 *
 * It runs after deployRealisticContracts: the EntryPoints, SimpleAccount factories and Safe 1.4.1
 * contracts it also deploys are in place already, so those steps revert ("a contract exists") and
 * that is fine; what matters is that each contract the recipe lists has code afterwards.
 */
import { readFileSync } from 'node:fs';
import type { Address, Hex } from 'viem';
import type { Rpc } from '../rpc.js';

type Step = { method: string; params: unknown[]; name?: string; note?: string; creates?: string };
type Recipe = { chainId: number; steps: Step[]; contracts: Array<{ name: string; address: Address }> };

const RECIPES = ['realaccounts.json', 'coinbase-smart-wallet.json'].map((file) => new URL(`../contracts/${file}`, import.meta.url));

/** The vendor contracts the account types name (mainnet addresses, lower case). */
export const VENDOR = {
  kernelV2Factory: '0x5de4839a76cf55d0c90e2061ef4386d962e15ae3',
  kernelV2EcdsaValidator: '0xd9ab5096a832b9ce79914329daee236f8eea0390',
  kernelV2Logic: {
    '2.1': '0xf048ad83cb2dfd6037a43902a2a5be04e53cd2eb',
    '2.2': '0x0da6a956b9488ed4dd761e59f52fdc6c8068e6b5',
    '2.3': '0xd3f582f6b4814e989ee8e96bc3175320b5a540ab',
    '2.4': '0xd3082872f8b06073a021b4602e022d5a070d7cfc',
  },
  kernelV3MetaFactory: '0xd703aae79538628d27099b8c4f621be4ccd142d5',
  kernelV3Factory: {
    '3.0': '0x6723b44abeec4e71ebe3232bd5b455805badd22f',
    '3.1': '0xaac5d4240af87249b3f71bc8e4a2cae074a3e419',
    '3.2': '0x7a1dbab750f12a90eb1b60d2ae3ad17d4d81effe',
    '3.3': '0x2577507b78c2008ff367261cb6285d44ba5ef2e9',
  },
  kernelV3Logic: {
    '3.0': '0x94f097e1ebeb4eca3aae54cabb08905b239a7d27',
    '3.1': '0xbac849bb641841b44e965fb01a4bf5f074f84b4d',
    '3.2': '0xd830d15d3dc0c269f3dbaa0f3e8626d33cfdabe1',
    '3.3': '0xd6cedde84be40893d153be9d467cd6ad37875b28',
  },
  lightAccountFactory: { '1.1.0': '0x00004ec70002a32400f8ae005a26081065620d20', '2.0.0': '0x0000000000400cdfef5e2714e63d8040b700bc24' },
  trustFactory: '0x729c310186a57833f622630a16d13f710b83272a',
  thirdwebFactory: { 'v0.6': '0x85e23b94e7f5e9cc1ff78bce78cfb15b81f0df00', 'v0.7': '0x4be0ddfebca9a5a4a617dee4dece99e7c862dceb' },
  etherspotFactory: '0x2a40091f044e48deb5c0fcbc442e443f3341b451',
  etherspotImplementation: '0x339eab59e54fe25125acec3225254a0cbd305a7b',
  safe7579Module: '0x7579ee8307284f293b1927136486880611f20002',
  safe7579Launchpad: '0x7579011ab74c46090561ea277ba79d510c6c00ff',
  rhinestoneAttester: '0x000000333034e9f539ce08819e12c1b8cb29084d',
  /** Rhinestone's module registry (ERC-7484) and the resolver the recipe registers in it. */
  moduleRegistry: '0x000000000069e2a187aeffb852bf3ccdc95151b2',
  moduleRegistryResolver: '0xf0f468571e764664c93308504642af941d9f77f1',
  nexusBootstrap: '0x6c77ddf87a1717465d29f8f16f44711eb0c839c0',
  coinbaseFactory: '0x0ba5ed0c6aa8c49038f819e587e2633c4a9f428a',
  coinbaseImplementation: '0x000100abaad02f1cfc8bbe32bd5a564817339e72',
} as const;

/** The anvil account the recipe was recorded from (account 0: the devnet's deployer). */
const RECORDED_SENDER = '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266';
/**
 * The address the replay sends those transactions from instead: no key of the devnet's, so the
 * replay never spends a nonce that a signer of the devnet counts (account 0's LocalSigner signs
 * ahead with a nonce it read once). Every one of them calls a CREATE2 factory, whose addresses do
 * not depend on the sender.
 */
const REPLAY_SENDER = '0x000000000000000000000000000000000000a11c';

/**
 * Replays the recipes on `rpc` (anvil, chain id 31337, automining) and checks every contract they
 * list has code. It sends from REPLAY_SENDER and the vendors' own impersonated addresses only.
 */
export async function deployVendorContracts(rpc: Rpc): Promise<void> {
  const chainId = Number(await rpc.call<Hex>('eth_chainId'));
  await rpc.call('anvil_setBalance', [REPLAY_SENDER, '0x56bc75e2d63100000']);
  await rpc.call('anvil_impersonateAccount', [REPLAY_SENDER]);
  for (const url of RECIPES) {
    const recipe = JSON.parse(readFileSync(url, 'utf8')) as Recipe;
    if (chainId !== recipe.chainId)
      throw new Error(`the vendor contracts' recipe ${url.pathname} is for chain id ${recipe.chainId}, the devnet is ${chainId}`);
    for (const step of recipe.steps) {
      const result = await rpc.call<Hex>(step.method, replayParams(step));
      // One after another, each mined before the next: a step may need the last.
      if (step.method === 'eth_sendTransaction') await waitForReceipt(rpc, result);
    }
    const codes = await rpc.batch<Hex>(recipe.contracts.map((c) => ['eth_getCode', [c.address, 'latest']]));
    const missing = recipe.contracts.filter((_, i) => codes[i] === '0x').map((c) => `${c.name} ${c.address}`);
    if (missing.length > 0) throw new Error(`the vendor contracts' recipe left no code at: ${missing.join(', ')}`);
  }
  await rpc.call('anvil_stopImpersonatingAccount', [REPLAY_SENDER]);
}

/**
 * Sends `data` to `to` from `from`, an address no key of the devnet's signs for (impersonated),
 * and waits for it to be mined; throws if it reverted.
 */
export async function sendImpersonated(rpc: Rpc, from: Address, tx: { to: Address; data: Hex }): Promise<void> {
  await rpc.call('anvil_setBalance', [from, '0x56bc75e2d63100000']);
  await rpc.call('anvil_impersonateAccount', [from]);
  try {
    const hash = await rpc.call<Hex>('eth_sendTransaction', [{ from, ...tx, gas: '0xe4e1c0' }]);
    await waitForReceipt(rpc, hash);
    const receipt = await rpc.call<{ status: Hex }>('eth_getTransactionReceipt', [hash]);
    if (receipt.status !== '0x1') throw new Error(`transaction ${hash} from ${from} to ${tx.to} reverted`);
  } finally {
    await rpc.call('anvil_stopImpersonatingAccount', [from]);
  }
}

function replayParams(step: Step): unknown[] {
  if (step.method !== 'eth_sendTransaction') return step.params;
  const [tx, ...rest] = step.params as [{ from: string }, ...unknown[]];
  return tx.from.toLowerCase() === RECORDED_SENDER ? [{ ...tx, from: REPLAY_SENDER }, ...rest] : step.params;
}

async function waitForReceipt(rpc: Rpc, hash: Hex): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await rpc.call<unknown>('eth_getTransactionReceipt', [hash])) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`vendor contracts' recipe: transaction ${hash} not mined`);
}
