/**
 * The account implementations opscan can name, and how to recognise each from what the chain
 * shows (indexer/sync/nameAccounts.ts reads the chain; this module only maps what was read to a
 * name). Names are the exact strings of the team's list; anything not recognised here is
 * UNKNOWN_IMPLEMENTATION, never a guess.
 *
 * Keys:
 * - an implementation's (or EIP-7702 delegate's) address: the vendors' mainnet addresses, which the
 *   recipes of devnet/contracts/ (replayed by devnet/realistic/vendorContracts.ts) put on a local
 *   chain at the same addresses;
 * - its runtime code hash, with every occurrence of the contract's own address zeroed first
 *   (`implementationCodeHash`): UUPS implementations (SimpleAccount, LightAccount, Kernel…) keep
 *   `address(this)` as an immutable, so the same build deployed elsewhere (the devnet's own
 *   SimpleAccount factories are not at mainnet addresses) only matches once that is masked;
 * - an ERC-7579 account's `accountId()` string, for the vendors that report a version there;
 * - the factory that deployed the account, as a hint when the code settles nothing.
 *
 * How each entry was derived: the recipe replayed on anvil (`--hardfork prague --chain-id 31337`),
 * one account deployed through each vendor factory (permissionless' `getFactoryArgs()` sent as a
 * plain transaction), then the account's code, ERC-1967 slot, Safe slot 0 / fallback-handler slot,
 * Biconomy's `address(this)` slot and `accountId()` read, and each implementation's code read and
 * hashed as below; the devnet's own builds (npm artifacts of @account-abstraction/contracts,
 * @safe-global/safe-4337, devnet/contracts/OZ7579Account.sol) deployed the way devnet/ deploys them
 * and hashed the same way. Versions were checked against what the contracts report where they
 * report one (Kernel v2 `version()`, Biconomy `VERSION()`, Safe `VERSION()`, `accountId()`).
 */
import { keccak256 } from 'ethers';

export const UNKNOWN_IMPLEMENTATION = 'unknown';

/** A stored implementation that names something (not null, "not looked at yet", nor 'unknown'). */
export const isNamed = (implementation: string | null): implementation is string =>
  implementation !== null && implementation !== UNKNOWN_IMPLEMENTATION;

type Known = { name: string; addresses: string[]; codeHashes: string[] };

/**
 * Account implementations, reached through the account's proxy (ERC-1967 slot, EIP-1167 clone,
 * Biconomy's slot) or its EIP-7702 delegation.
 */
const IMPLEMENTATIONS: Known[] = [
  // SimpleAccountFactory.accountImplementation() of the mainnet factories (recipe) and of the npm
  // builds the devnet deploys (same hash once address(this) is masked). v0.9: the ep09 npm build
  // (0.9.0-rc.1; no mainnet factory in the recipe), deployed by its factory against the canonical
  // v0.9 EntryPoint (the EntryPoint address is an immutable, so the hash is per EntryPoint address).
  {
    name: 'SimpleAccount v0.6',
    addresses: ['0x8abb13360b87be5eeb1b98647a016add927a136c'],
    codeHashes: ['0x8e1c9a55a181ba25ce4c32940819521ab3f093ec6f9c9e68554f6ab99d7a57dc'],
  },
  {
    name: 'SimpleAccount v0.7',
    addresses: ['0x68641de71cfea5a5d0d29712449ee254bb1400c2'],
    codeHashes: ['0xd5b87a908da98c4dbbcd9e3b0e061f6af04075e5f465b4d935e78c99ca299489'],
  },
  {
    name: 'SimpleAccount v0.8',
    addresses: ['0x28426d752372d68d34340bd94390950dce3c9ec3'],
    codeHashes: ['0xa9be199134ec62bd538572e6f7cc8620776272bbc72e01065e31ea76d3312bdb'],
  },
  {
    name: 'SimpleAccount v0.9',
    addresses: [],
    codeHashes: ['0xb5b20f407d59e1c5726de2b11df1190fdd092958da8ced74ebb49a81cfe163be'],
  },
  // Simple7702Account: no immutables. v0.8 at its mainnet address (the recipe names it
  // SIMPLE_ACCOUNT_IMPLEMENTATION_V08, but its code is Simple7702Account's: the ep08 npm build has
  // the same hash). v0.9: the ep09 npm build with the canonical v0.9 EntryPoint.
  {
    name: 'Simple7702Account v0.8',
    addresses: ['0xe6cae83bde06e4c305530e199d7217f42808555b'],
    codeHashes: ['0xcc7b633aef4b2543cb8f37522adf1a401f910f0f6b2430c1eecc11f401ccfcf3'],
  },
  {
    name: 'Simple7702Account v0.9',
    addresses: [],
    codeHashes: ['0x56d95778c9c7e72191fbf1dbe4c4d5adf03f47eb541dd620977e7d62a9622369'],
  },
  // The devnet's OpenZeppelin ERC-7579 account (devnet/contracts/OZ7579Account.sol, built against
  // EntryPoint v0.8): its factory's implementation(); accountId() "@openzeppelin/contracts.AccountERC7579.v1.0.0".
  {
    name: 'OpenZeppelin AccountERC7579',
    addresses: [],
    codeHashes: ['0xacfa544446bbdaafd5b82257fbcf2f33338026a29c11605fd5accb127353ddff'],
  },
  // Kernel v2 (EntryPoint v0.6): the recipe's KERNEL_V06_ACCOUNT_V2_x_LOGIC; version() answers 0.2.x.
  // The KernelFactory's proxy keeps the implementation in the ERC-1967 slot.
  {
    name: 'Kernel v2.1',
    addresses: ['0xf048ad83cb2dfd6037a43902a2a5be04e53cd2eb'],
    codeHashes: ['0x5fc55360fea5e9f4b7b2c66ed6305089b2ee3afce87757943d6a7fd9950a1f55'],
  },
  {
    name: 'Kernel v2.2',
    addresses: ['0x0da6a956b9488ed4dd761e59f52fdc6c8068e6b5'],
    codeHashes: ['0xd5ed5ea20b441d87d70593047d910f5e9b385b4284673dd0d53e4fa357c05fbf'],
  },
  {
    name: 'Kernel v2.3',
    addresses: ['0xd3f582f6b4814e989ee8e96bc3175320b5a540ab'],
    codeHashes: ['0x5b2abd1d77d38714f06694efb09bfd42f6cbb4ac9f95d90c7a9eb28ad7b40099'],
  },
  {
    name: 'Kernel v2.4',
    addresses: ['0xd3082872f8b06073a021b4602e022d5a070d7cfc'],
    codeHashes: ['0x0b5ee5c31df8fb9077cae718bd06df2730d05190db260175d00eb083fbdf3db5'],
  },
  // Kernel v3 (ERC-7579, EntryPoint v0.7): the recipe's KERNEL_V07_*ACCOUNT_V3_LOGIC; accountId()
  // answers kernel.advanced.v0.3.0-beta / v0.3.1 / v0.3.2 / v0.3.3.
  {
    name: 'Kernel v3.0',
    addresses: ['0x94f097e1ebeb4eca3aae54cabb08905b239a7d27'],
    codeHashes: ['0xf5de8c088f7b3941ed9fbca7a5111a4646da76623b75604193a947b9ab772c7a'],
  },
  {
    name: 'Kernel v3.1',
    addresses: ['0xbac849bb641841b44e965fb01a4bf5f074f84b4d'],
    codeHashes: ['0x07d9c82c43b72fd491fb38ded0462edeefce168b4c3cdfd77da95045201afcef'],
  },
  {
    name: 'Kernel v3.2',
    addresses: ['0xd830d15d3dc0c269f3dbaa0f3e8626d33cfdabe1'],
    codeHashes: ['0x806e584ebc13215baf0d653ccc2c47441745100a4f4ac14302b8729b3dfe4999'],
  },
  {
    name: 'Kernel v3.3',
    addresses: ['0xd6cedde84be40893d153be9d467cd6ad37875b28'],
    codeHashes: ['0x4e48c25bcd562f32642d1a8cb477acb7078d2061e7d733dabdbb6f0b3b4060d0'],
  },
  // Biconomy Smart Account v2: permissionless' ACCOUNT_V2_0_LOGIC, found at slot address(this) of an
  // account its factory (0x000000a5…34f5) deployed; VERSION() answers 2.0.0.
  {
    name: 'Biconomy Smart Account v2.0.0',
    addresses: ['0x0000002512019dafb59528b82cb92d3c5d2423ac'],
    codeHashes: ['0xfffd9a99fd94682145e558aaa1eea51ff1dfc3529b235aed3210b2c9ab79f0cb'],
  },
  // Nexus: the ERC-1967 implementation of an account the K1 validator factory (0x00000bb1…db55)
  // deployed; accountId() answers biconomy.nexus.1.0.0 (the version is taken from accountId()).
  {
    name: 'Nexus 1.0.0',
    addresses: ['0x000000039dfcad030719b07296710f045f0558f7'],
    codeHashes: ['0x22a33b6459c448da8760d552ca5e1fc0ff4932d268bef301afd899934b389315'],
  },
  // LightAccount: the ERC-1967 implementation of an account each factory (v1.1.0 0x00004ec7…0d20,
  // v2.0.0 0x00000000…bc24) deployed.
  {
    name: 'LightAccount v1.1.0',
    addresses: ['0xae8c656ad28f2b59a196ab61815c16a0ae1c3cba'],
    codeHashes: ['0xcdd6a1f30b991209798f03beb862a563fa18a030ffc1019a0ad520fc1ed2e070'],
  },
  {
    name: 'LightAccount v2.0.0',
    addresses: ['0x8e8e658e22b12ada97b402ff0b044d6a325013c7'],
    codeHashes: ['0xcc97cede82e99db42cea48c9bb6a9e3a09df82c0eb69106be3d410528e58ddd4'],
  },
  // Thirdweb: each factory (v0.6 0x85e23b94…df00, v0.7 0x4be0ddfe…dceb) clones (EIP-1167) the
  // implementation its constructor deployed.
  {
    name: 'Thirdweb Account v0.6',
    addresses: ['0xf22175c80c6e074c171811c59c6c0087e2a6a346'],
    codeHashes: ['0x34361ca8fffdd7e86feef683e2d3a9eff0424f4c75372803d82c79db9dd117bb'],
  },
  {
    name: 'Thirdweb Account v0.7',
    addresses: ['0x94ec38a5d2eda5a543ab4c08d998338d4082beb2'],
    codeHashes: ['0xa355b97d97358370e60d21b37dc63939c260691beef3a52b98b17df069236c75'],
  },
  // Etherspot: the recipe's ETHERSPOT_IMPLEMENTATION behind the ERC-1967 proxy its factory deploys;
  // accountId() answers etherspotwallet.modular.v1.0.0.
  {
    name: 'Etherspot Modular Wallet 1.0.0',
    addresses: ['0x339eab59e54fe25125acec3225254a0cbd305a7b'],
    codeHashes: ['0x13f7a5d3eb87ab1d28fae01a23c4d7a6eedac713893d93e77abd69d5313e6564'],
  },
  // Coinbase Smart Wallet v1 behind the ERC-1967 proxy its factory (0x0ba5ed0c…428a) deploys: the
  // coinbase-smart-wallet recipe puts the implementation on a local chain byte-identical to mainnet's.
  {
    name: 'Coinbase Smart Wallet v1',
    addresses: ['0x000100abaad02f1cfc8bbe32bd5a564817339e72'],
    codeHashes: ['0x4c8fefa9e5813f1646e140db55083b5d8b37fbf1c73fbfbac78aaab2dc621682'],
  },
  // MetaMask's Delegation Framework, NAME() and VERSION() as each answers: the Hybrid DeleGator
  // behind the ERC-1967 proxy its SimpleFactory deploys, the EIP-7702 Stateless DeleGator an EOA
  // delegates to. Addresses: @metamask/delegation-deployments' 1.3.0 deployment (mainnet and the
  // chains it lists); code hashes: the @metamask/delegation-abis 2.0.0 build as the realistic devnet
  // deploys it (delegationFramework.ts; the DelegationManager and EntryPoint v0.7 are immutables).
  {
    name: 'MetaMask Hybrid DeleGator 1.3.0',
    addresses: ['0x48dbe696a4d990079e039489ba2053b36e8ffec4'],
    codeHashes: ['0xfe5df3334e1ba3585c5ebd49593fedd6a4cdeffe0df4751d3f3d58c3aed1c7dd'],
  },
  {
    name: 'MetaMask EIP-7702 Stateless DeleGator 1.3.0',
    addresses: ['0x63c0c19a282a1b52b07dd5a65b58948a07dae32b'],
    codeHashes: ['0x77516846ff18ba0bed6ea39433a8cb914fc305c72b5e8fedb583d2e09f5ded77'],
  },
];

/**
 * Accounts whose own code names them (no proxy to follow): Trust Wallet's Barz, a diamond whose
 * runtime code is the same for every account its factory (0x729c3101…272a) deploys (the facets live
 * in its storage).
 */
const ACCOUNT_CODES: Known[] = [
  {
    name: 'Barz (Trust Wallet)',
    addresses: [],
    codeHashes: ['0xe152e0d0626438840037db419d2e66fa32002f1ee719b1dbe2892314bc67b6de'],
  },
];

/** Safe singletons (slot 0 of a Safe proxy): the recipe's SAFE_SINGLETON and SAFE_ONE_FIVE_SINGLETON; VERSION() answers. */
const SAFE_SINGLETONS: Known[] = [
  {
    name: 'Safe 1.4.1',
    addresses: ['0x41675c099f32341bf84bfc5382af534df5c7461a'],
    codeHashes: ['0x1fe2df852ba3299d6534ef416eefa406e56ced995bca886ab7a553e6d0c5e1c4'],
  },
  {
    name: 'Safe 1.5.0',
    addresses: ['0xff51a5898e281db6dfc7855790607438df2ca44b'],
    codeHashes: ['0xdda019cbd7c867a533a2a86e5c53434fdc50b13122b5a5ddb4a8df61b31c20f2'],
  },
];

/**
 * A Safe's ERC-4337 module, read from its fallback-handler slot (the 4337 module and the Safe7579
 * adapter are each set as the Safe's fallback handler, and enabled as a module). Safe4337Module
 * 0.2.0 / 0.3.0: the recipe's SAFE_V06_MODULE / SAFE_V07_MODULE (the npm 0.3.0 build the devnet
 * deploys elsewhere has the same code hash); Safe7579: the recipe's SAFE_7579_MODULE, whose
 * accountId() answers rhinestone.safe7579.v1.0.0.
 */
const SAFE_MODULES: Known[] = [
  {
    name: 'Safe4337Module 0.2.0',
    addresses: ['0xa581c4a4db7175302464ff3c06380bc3270b4037'],
    codeHashes: ['0x1cc7d3ede9aaaaa4196c947e4852efb6d984ecfb3a9254d08855c61746a40c44'],
  },
  {
    name: 'Safe4337Module 0.3.0',
    addresses: ['0x75cf11467937ce3f2f357ce24ffc3dbf8fd5c226'],
    codeHashes: ['0x2aea997c4e3cf0e2f333025372e219abcfde81c21fc2f8fb066414a5685dd3e0'],
  },
  {
    name: 'Safe7579 1.0.0',
    addresses: ['0x7579ee8307284f293b1927136486880611f20002'],
    codeHashes: ['0xe03f1efc4aa74c91a87731397278a9c32d81f593263931fc94ff867aa09b83ac'],
  },
];

/**
 * Factories whose accounts all run one implementation: the name when the account's code settles
 * nothing (its implementation is neither known by address nor by code hash). The recipe's factory
 * addresses; Kernel's and Safe's factories take the implementation as an argument, so they are no hint.
 */
const FACTORY_HINTS: ReadonlyMap<string, string> = new Map([
  ['0x9406cc6185a346906296840746125a0e44976454', 'SimpleAccount v0.6'],
  ['0x91e60e0613810449d098b0b5ec8b51a0fe8c8985', 'SimpleAccount v0.7'],
  ['0x13e9ed32155810fdbd067d4522c492d6f68e5944', 'SimpleAccount v0.8'],
  ['0x000000a56aaca3e9a4c479ea6b6cd0dbcb6634f5', 'Biconomy Smart Account v2.0.0'],
  ['0x00004ec70002a32400f8ae005a26081065620d20', 'LightAccount v1.1.0'],
  ['0x0000000000400cdfef5e2714e63d8040b700bc24', 'LightAccount v2.0.0'],
  ['0x85e23b94e7f5e9cc1ff78bce78cfb15b81f0df00', 'Thirdweb Account v0.6'],
  ['0x4be0ddfebca9a5a4a617dee4dece99e7c862dceb', 'Thirdweb Account v0.7'],
  ['0x729c310186a57833f622630a16d13f710b83272a', 'Barz (Trust Wallet)'],
  ['0x0ba5ed0c6aa8c49038f819e587e2633c4a9f428a', 'Coinbase Smart Wallet v1'],
]);

const byKey = (entries: Known[]) => {
  const map = new Map<string, string>();
  for (const e of entries) for (const key of [...e.addresses, ...e.codeHashes]) map.set(key, e.name);
  return map;
};
const IMPLEMENTATION_KEYS = byKey(IMPLEMENTATIONS);
const ACCOUNT_CODE_KEYS = byKey(ACCOUNT_CODES);
const SAFE_SINGLETON_KEYS = byKey(SAFE_SINGLETONS);
const SAFE_MODULE_KEYS = byKey(SAFE_MODULES);

/** What one contract is, as the identification read it: its address and masked code hash (null: not read). */
export type ContractSeen = { address: string; codeHash: string | null };

const lookup = (keys: Map<string, string>, c: ContractSeen | null): string | null =>
  c === null ? null : (keys.get(c.address.toLowerCase()) ?? (c.codeHash === null ? null : (keys.get(c.codeHash) ?? null)));

export const implementationName = (c: ContractSeen | null): string | null => lookup(IMPLEMENTATION_KEYS, c);
export const accountCodeName = (c: ContractSeen | null): string | null => lookup(ACCOUNT_CODE_KEYS, c);
export const safeSingletonName = (c: ContractSeen | null): string | null => lookup(SAFE_SINGLETON_KEYS, c);
export const safeModuleName = (c: ContractSeen | null): string | null => lookup(SAFE_MODULE_KEYS, c);
export const factoryHint = (factory: string | null): string | null => (factory ? (FACTORY_HINTS.get(factory.toLowerCase()) ?? null) : null);

/** A Safe's name: its singleton's version, and its 4337 module when that is known (else the singleton alone). */
export const safeName = (singleton: string, module: string | null): string => (module ? `${singleton} + ${module}` : singleton);

/**
 * The name an ERC-7579 `accountId()` string gives ("vendor.name.version"), for the vendors that
 * report their version there: Nexus, Kernel v3, Etherspot, OpenZeppelin. Null for others (Safe7579
 * names the module, not the account: see safeModuleName).
 */
export function accountIdName(accountId: string | null): string | null {
  if (!accountId) return null;
  let m = /^biconomy\.nexus\.(\d+\.\d+\.\d+)/.exec(accountId);
  if (m) return `Nexus ${m[1]}`;
  // kernel.advanced.v0.3.1 → Kernel v3.1 (v0.3.0-beta → Kernel v3.0).
  m = /^kernel\.advanced\.v0\.(\d+)\.(\d+)/.exec(accountId);
  if (m) return `Kernel v${m[1]}.${m[2]}`;
  // etherspotwallet.modular.v1.0.0 → Etherspot Modular Wallet 1.0.0 (the bare version, as Nexus's).
  m = /^etherspotwallet\.modular\.v?(\d+\.\d+\.\d+)/.exec(accountId);
  if (m) return `Etherspot Modular Wallet ${m[1]}`;
  if (accountId.startsWith('@openzeppelin/contracts.AccountERC7579')) return 'OpenZeppelin AccountERC7579';
  return null;
}

/**
 * keccak256 of runtime code with every byte-aligned occurrence of the contract's own address zeroed:
 * the key of the tables above (equal to the plain code hash for contracts without `address(this)`).
 */
export function implementationCodeHash(code: string, address: string): string {
  const self = address.toLowerCase().slice(2);
  const hex = code.toLowerCase().slice(2);
  const parts: string[] = [];
  let from = 0;
  for (let at = hex.indexOf(self); at !== -1; at = hex.indexOf(self, at + 1)) {
    if (at % 2 !== 0 || at < from) continue;
    parts.push(hex.slice(from, at), '0'.repeat(40));
    from = at + 40;
  }
  parts.push(hex.slice(from));
  return keccak256(`0x${parts.join('')}`);
}
