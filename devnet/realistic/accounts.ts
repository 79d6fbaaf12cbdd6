/**
 * The smart accounts of the realistic devnet, each built and signed by a real client SDK the way a
 * wallet would: permissionless' toSimpleSmartAccount and toSafeSmartAccount, viem's
 * toSimple7702SmartAccount, and a viem toSmartAccount over OpenZeppelin's ERC-7579 account (no SDK
 * ships one; its calls are encoded with permissionless' encode7579Calls), and the wallet vendors'
 * accounts (vendorAccounts.ts: Kernel, Biconomy, Nexus, LightAccount, Safe7579, Thirdweb, Trust,
 * Etherspot, Coinbase Smart Wallet at their mainnet addresses; MetaMask's DeleGators). Factory and module addresses of the first group are the
 * devnet's where they differ from mainnet's. ACCOUNT_KINDS is the table of them all.
 */
import { encodeFunctionData, parseAbi, type Address, type Hex, type PublicClient } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import {
  entryPoint08Abi,
  entryPoint09Abi,
  getUserOperationHash,
  toSimple7702SmartAccount,
  toSmartAccount,
  type SmartAccount,
} from 'viem/account-abstraction';
import { toSafeSmartAccount, toSimpleSmartAccount } from 'permissionless/accounts';
import { decode7579Calls, encode7579Calls } from 'permissionless/utils';
import type { EntryPointVersion } from '../../shared/networks.js';
import type { RealisticContracts } from './contracts.js';
import type { DelegationFramework } from './delegationFramework.js';
import { VENDOR_ACCOUNT_TYPES, createVendorAccount, type VendorAccountType } from './vendorAccounts.js';

const isVendorType = (type: string): type is VendorAccountType => (VENDOR_ACCOUNT_TYPES as readonly string[]).includes(type);

/**
 * How an op's callData asks for its calls. 'replayable': Coinbase Smart Wallet's
 * executeWithoutChainIdValidation(bytes[]), calls of the account to itself (owner changes) under
 * nonce key 8453, signed over a hash without the chain id so that they can be replayed on every chain.
 */
export type ExecutionMode = 'single' | 'batch' | 'delegatecall' | 'replayable';

type AccountKind = {
  /** The EntryPoint it runs on. */
  entryPoint: EntryPointVersion;
  /** Its implementation, named as opscan names it (the names the indexer's table uses). */
  implementation: string;
  /** The ways its callData asks for calls, each of which the traffic sends. */
  modes: readonly ExecutionMode[];
  /**
   * false where permissionless 0.4.1 ignores getNonce({ key }) (it reads only the nonceKey the
   * account was built with): its ops take the default key, never parallel ones.
   */
  parallelNonceKeys?: false;
};

const CALL_BATCH = ['single', 'batch'] as const;
/** ERC-7579 execute(mode, …): call type 0x00, 0x01 and 0xff. */
const ERC7579_MODES = ['single', 'batch', 'delegatecall'] as const;

/** Every account type of the realistic devnet (Safe's 4337 module 0.3.0 is the v0.7 build). */
export const ACCOUNT_KINDS = {
  'simple-v0.6': { entryPoint: 'v0.6', implementation: 'SimpleAccount v0.6', modes: CALL_BATCH },
  'simple-v0.7': { entryPoint: 'v0.7', implementation: 'SimpleAccount v0.7', modes: CALL_BATCH },
  'simple-v0.8': { entryPoint: 'v0.8', implementation: 'SimpleAccount v0.8', modes: CALL_BATCH },
  'simple-v0.9': { entryPoint: 'v0.9', implementation: 'SimpleAccount v0.9', modes: CALL_BATCH },
  'simple7702-v0.8': { entryPoint: 'v0.8', implementation: 'Simple7702Account v0.8', modes: CALL_BATCH },
  'simple7702-v0.9': { entryPoint: 'v0.9', implementation: 'Simple7702Account v0.9', modes: CALL_BATCH },
  safe: { entryPoint: 'v0.7', implementation: 'Safe 1.4.1 + Safe4337Module 0.3.0', modes: CALL_BATCH },
  oz7579: { entryPoint: 'v0.8', implementation: 'OpenZeppelin AccountERC7579', modes: ERC7579_MODES },
  // Kernel v2: execute(to, value, data, operation) and executeBatch(Call[]).
  // v2.1 has no executeBatch (its bytecode lacks 0x34fcd5be): one call per op.
  'kernel-v2.1': { entryPoint: 'v0.6', implementation: 'Kernel v2.1', modes: ['single'], parallelNonceKeys: false },
  'kernel-v2.2': { entryPoint: 'v0.6', implementation: 'Kernel v2.2', modes: CALL_BATCH, parallelNonceKeys: false },
  'kernel-v2.3': { entryPoint: 'v0.6', implementation: 'Kernel v2.3', modes: CALL_BATCH, parallelNonceKeys: false },
  'kernel-v2.4': { entryPoint: 'v0.6', implementation: 'Kernel v2.4', modes: CALL_BATCH, parallelNonceKeys: false },
  // v3.0 (0.3.0-beta) runs a standard delegatecall (target ‖ data) without making its calls: none sent.
  'kernel-v3.0': { entryPoint: 'v0.7', implementation: 'Kernel v3.0', modes: CALL_BATCH, parallelNonceKeys: false },
  'kernel-v3.1': { entryPoint: 'v0.7', implementation: 'Kernel v3.1', modes: ERC7579_MODES, parallelNonceKeys: false },
  'kernel-v3.2': { entryPoint: 'v0.7', implementation: 'Kernel v3.2', modes: ERC7579_MODES, parallelNonceKeys: false },
  'kernel-v3.3': { entryPoint: 'v0.7', implementation: 'Kernel v3.3', modes: ERC7579_MODES, parallelNonceKeys: false },
  'biconomy-v2': { entryPoint: 'v0.6', implementation: 'Biconomy Smart Account v2.0.0', modes: CALL_BATCH },
  nexus: { entryPoint: 'v0.7', implementation: 'Nexus 1.0.0', modes: ERC7579_MODES },
  'light-v1.1.0': { entryPoint: 'v0.6', implementation: 'LightAccount v1.1.0', modes: CALL_BATCH },
  'light-v2.0.0': { entryPoint: 'v0.7', implementation: 'LightAccount v2.0.0', modes: CALL_BATCH },
  safe7579: { entryPoint: 'v0.7', implementation: 'Safe 1.4.1 + Safe7579 1.0.0', modes: ERC7579_MODES },
  'thirdweb-v0.6': { entryPoint: 'v0.6', implementation: 'Thirdweb Account v0.6', modes: CALL_BATCH },
  'thirdweb-v0.7': { entryPoint: 'v0.7', implementation: 'Thirdweb Account v0.7', modes: CALL_BATCH },
  trust: { entryPoint: 'v0.6', implementation: 'Barz (Trust Wallet)', modes: CALL_BATCH },
  etherspot: { entryPoint: 'v0.7', implementation: 'Etherspot Modular Wallet 1.0.0', modes: ERC7579_MODES, parallelNonceKeys: false },
  // execute / executeBatch, and executeWithoutChainIdValidation for its cross-chain owner changes.
  coinbase: { entryPoint: 'v0.6', implementation: 'Coinbase Smart Wallet v1', modes: ['single', 'batch', 'replayable'] },
  // Owned by a passkey: WebAuthn P-256 signatures, checked by the account's own P-256 code (no precompile).
  'coinbase-passkey': { entryPoint: 'v0.6', implementation: 'Coinbase Smart Wallet v1', modes: CALL_BATCH },
  // ERC-7579 execute(mode, data) with call types single and batch (DeleGators support no delegatecall).
  'metamask-hybrid': { entryPoint: 'v0.7', implementation: 'MetaMask Hybrid DeleGator 1.3.0', modes: CALL_BATCH },
  'metamask-7702': { entryPoint: 'v0.7', implementation: 'MetaMask EIP-7702 Stateless DeleGator 1.3.0', modes: CALL_BATCH },
} as const satisfies Record<string, AccountKind>;
export type AccountType = keyof typeof ACCOUNT_KINDS;
export const ACCOUNT_TYPES = Object.keys(ACCOUNT_KINDS) as AccountType[];

/** Whether the type's ops may take parallel nonce keys (see AccountKind.parallelNonceKeys). */
export const takesParallelNonceKeys = (type: AccountType): boolean => (ACCOUNT_KINDS[type] as AccountKind).parallelNonceKeys !== false;

/** The EntryPoint each account type runs on. */
export const ENTRY_POINT_OF = Object.fromEntries(ACCOUNT_TYPES.map((t) => [t, ACCOUNT_KINDS[t].entryPoint])) as Record<
  AccountType,
  EntryPointVersion
>;

export type RealAccount = {
  type: AccountType;
  version: EntryPointVersion;
  address: Address;
  owner: PrivateKeyAccount;
  sdk: SmartAccount;
  /** The delegate an EIP-7702 account's EOA authorizes (null for contract accounts). */
  delegate: Address | null;
  /** Deployed (or delegated) by an op already. */
  deployed: boolean;
  /** Has approved the ERC-20 paymaster to take its token. */
  approvedPaymaster: boolean;
  /** Where its ERC-7579 module changes stand (modules.ts; 'none' for every other account). */
  moduleStage: 'none' | 'installed' | 'uninstalled';
};

export async function createRealAccount(
  type: AccountType,
  {
    client,
    contracts,
    delegationFramework,
  }: { client: PublicClient; contracts: RealisticContracts; delegationFramework: DelegationFramework },
  ownerKey: Hex,
  index: bigint,
): Promise<RealAccount> {
  const owner = privateKeyToAccount(ownerKey);
  const version = ENTRY_POINT_OF[type];
  const entryPointAddress = contracts.entryPoints[version];
  let sdk: SmartAccount;
  let delegate: Address | null = null;
  if (isVendorType(type)) {
    sdk = await createVendorAccount(type, {
      client,
      owner,
      index,
      entryPoint: entryPointAddress,
      delegationFramework,
      moduleAttester: contracts.erc7579Modules.attester,
    });
    if (type === 'metamask-7702') delegate = delegationFramework.stateless7702DeleGator;
  } else
    switch (type) {
      case 'simple-v0.6':
      case 'simple-v0.7':
      case 'simple-v0.8':
      case 'simple-v0.9':
        sdk = await toSimpleSmartAccount({
          client,
          owner,
          index,
          factoryAddress: contracts.simpleAccountFactories[version],
          // permissionless 0.4 knows SimpleAccount up to v0.8; v0.9's is v0.8's (EIP-712 userOpHash,
          // signed the same way), and viem hashes v0.8 and v0.9 ops alike.
          entryPoint: { address: entryPointAddress, version: version === 'v0.6' ? '0.6' : version === 'v0.7' ? '0.7' : '0.8' },
        });
        break;
      case 'simple7702-v0.8':
      case 'simple7702-v0.9':
        delegate = contracts.simple7702[version as 'v0.8' | 'v0.9'];
        sdk = await toSimple7702SmartAccount({
          client,
          owner,
          implementation: delegate,
          entryPoint:
            version === 'v0.8'
              ? { abi: entryPoint08Abi, address: entryPointAddress, version: '0.8' }
              : ({ abi: entryPoint09Abi, address: entryPointAddress, version: '0.9' } as never),
        });
        break;
      case 'safe':
        sdk = await toSafeSmartAccount({
          client,
          owners: [owner],
          version: '1.4.1',
          entryPoint: { address: entryPointAddress, version: '0.7' },
          saltNonce: index,
          safe4337ModuleAddress: contracts.safe.module4337,
          safeModuleSetupAddress: contracts.safe.moduleSetup,
          safeSingletonAddress: contracts.safe.singleton,
          safeProxyFactoryAddress: contracts.safe.proxyFactory,
          multiSendAddress: contracts.safe.multiSend,
          multiSendCallOnlyAddress: contracts.safe.multiSendCallOnly,
        });
        break;
      case 'oz7579':
        sdk = await toOz7579Account(client, { factory: contracts.oz7579Factory, entryPoint: entryPointAddress }, owner, index);
        break;
    }
  return {
    type,
    version,
    address: (await sdk.getAddress()).toLowerCase() as Address,
    owner,
    sdk,
    delegate,
    deployed: false,
    approvedPaymaster: false,
    moduleStage: 'none',
  };
}

const OZ7579_FACTORY_ABI = parseAbi([
  'function createAccount(address owner, uint256 index) returns (address)',
  'function getAddress(address owner, uint256 index) view returns (address)',
]);

/**
 * OpenZeppelin's AccountERC7579 as a viem smart account: ERC-7579 execute(mode, executionCalldata)
 * in single-call mode for one call and batch mode for several; the owner signs the v0.8 userOpHash
 * (EIP-712) with no prefix, as SignerECDSA checks it.
 */
async function toOz7579Account(
  client: PublicClient,
  { factory, entryPoint }: { factory: Address; entryPoint: Address },
  owner: PrivateKeyAccount,
  index: bigint,
): Promise<SmartAccount> {
  const address = await client.readContract({
    address: factory,
    abi: OZ7579_FACTORY_ABI,
    functionName: 'getAddress',
    args: [owner.address, index],
  });
  const factoryData = encodeFunctionData({ abi: OZ7579_FACTORY_ABI, functionName: 'createAccount', args: [owner.address, index] });
  const chainId = await client.getChainId();
  return toSmartAccount({
    client,
    entryPoint: { address: entryPoint, abi: entryPoint08Abi, version: '0.8' },
    getAddress: () => Promise.resolve(address),
    getFactoryArgs: () => Promise.resolve({ factory, factoryData }),
    encodeCalls: (calls) =>
      Promise.resolve(
        encode7579Calls({
          mode: { type: calls.length > 1 ? 'batchcall' : 'call', revertOnError: false, selector: '0x', context: '0x' },
          callData: calls.map((c) => ({ to: c.to, value: c.value ?? 0n, data: c.data ?? '0x' })),
        }),
      ),
    decodeCalls: (data) => Promise.resolve(decode7579Calls(data).callData.map((c) => ({ to: c.to, value: c.value, data: c.data }))),
    // A well-formed signature of the right length, for gas estimation.
    getStubSignature: () =>
      Promise.resolve(
        '0xfffffffffffffffffffffffffffffff0000000000000000000000000000000007aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1c',
      ),
    signMessage: async ({ message }) => owner.signMessage({ message }),
    signTypedData: async (typedData) => owner.signTypedData(typedData as never),
    signUserOperation: async (op) => {
      const hash = getUserOperationHash({
        userOperation: { ...op, sender: address },
        entryPointAddress: entryPoint,
        entryPointVersion: '0.8',
        chainId,
      });
      return owner.sign({ hash });
    },
  });
}
