/**
 * The wallet vendors' accounts, each built and signed by its SDK's own to…SmartAccount:
 * permissionless 0.4.1's over the vendor contracts vendorContracts.ts deploys at their mainnet
 * addresses (permissionless' defaults, named here anyway so what runs is plain to read); viem's
 * toCoinbaseSmartAccount (permissionless has none) over Coinbase Smart Wallet v1's factory at its
 * mainnet address, owned by a key or by a passkey (passkey.ts); MetaMask's toMetaMaskSmartAccount over the Delegation Framework
 * delegationFramework.ts deploys.
 */
import { keccak256, toBytes, type Address, type PublicClient } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { toCoinbaseSmartAccount, type SmartAccount } from 'viem/account-abstraction';
import {
  toBiconomySmartAccount,
  toEtherspotSmartAccount,
  toKernelSmartAccount,
  toLightSmartAccount,
  toNexusSmartAccount,
  toSafeSmartAccount,
  toThirdwebSmartAccount,
  toTrustSmartAccount,
} from 'permissionless/accounts';
import { createDeleGatorAccount, type DelegationFramework } from './delegationFramework.js';
import { toLocalPasskey } from './passkey.js';
import { VENDOR } from './vendorContracts.js';

export const VENDOR_ACCOUNT_TYPES = [
  'kernel-v2.1',
  'kernel-v2.2',
  'kernel-v2.3',
  'kernel-v2.4',
  'kernel-v3.0',
  'kernel-v3.1',
  'kernel-v3.2',
  'kernel-v3.3',
  'biconomy-v2',
  'nexus',
  'light-v1.1.0',
  'light-v2.0.0',
  'safe7579',
  'thirdweb-v0.6',
  'thirdweb-v0.7',
  'trust',
  'etherspot',
  'coinbase',
  'coinbase-passkey',
  'metamask-hybrid',
  'metamask-7702',
] as const;
export type VendorAccountType = (typeof VENDOR_ACCOUNT_TYPES)[number];

type Build = {
  client: PublicClient;
  owner: PrivateKeyAccount;
  index: bigint;
  entryPoint: Address;
  delegationFramework: DelegationFramework;
  /** An attester of the module registry besides Rhinestone's, whom Safe7579 accounts trust (moduleRegistry.ts). */
  moduleAttester: Address;
};

/** The permissionless account of `type` for `owner` (its `index`-th account). */
export async function createVendorAccount(
  type: VendorAccountType,
  { client, owner, index, entryPoint, delegationFramework, moduleAttester }: Build,
): Promise<SmartAccount> {
  const v06 = { address: entryPoint, version: '0.6' } as const;
  const v07 = { address: entryPoint, version: '0.7' } as const;
  switch (type) {
    case 'kernel-v2.1':
    case 'kernel-v2.2':
    case 'kernel-v2.3':
    case 'kernel-v2.4': {
      const minor = type.slice('kernel-v'.length) as keyof typeof VENDOR.kernelV2Logic;
      return toKernelSmartAccount({
        client,
        owners: [owner],
        index,
        entryPoint: v06,
        version: `0.${minor}` as '0.2.1',
        factoryAddress: VENDOR.kernelV2Factory,
        accountLogicAddress: VENDOR.kernelV2Logic[minor],
        validatorAddress: VENDOR.kernelV2EcdsaValidator,
      });
    }
    case 'kernel-v3.0':
    case 'kernel-v3.1':
    case 'kernel-v3.2':
    case 'kernel-v3.3': {
      const minor = type.slice('kernel-v'.length) as keyof typeof VENDOR.kernelV3Logic;
      return toKernelSmartAccount({
        client,
        owners: [owner],
        index,
        entryPoint: v07,
        // permissionless names v3.0 by its pre-release tag.
        version: minor === '3.0' ? '0.3.0-beta' : (`0.${minor}` as '0.3.1'),
      });
    }
    case 'biconomy-v2':
      return toBiconomySmartAccount({ client, owners: [owner], index, entryPoint: v06 });
    case 'nexus':
      return toNexusSmartAccount({ client, owners: [owner], index, entryPoint: v07, version: '1.0.0' });
    case 'light-v1.1.0':
      return toLightSmartAccount({
        client,
        owner,
        index,
        entryPoint: v06,
        version: '1.1.0',
        factoryAddress: VENDOR.lightAccountFactory['1.1.0'],
      });
    case 'light-v2.0.0':
      return toLightSmartAccount({
        client,
        owner,
        index,
        entryPoint: v07,
        version: '2.0.0',
        factoryAddress: VENDOR.lightAccountFactory['2.0.0'],
      });
    case 'safe7579':
      // Safe 1.4.1 set up through Rhinestone's launchpad with the Safe7579 adapter as its 4337 module.
      return toSafeSmartAccount({
        client,
        owners: [owner],
        version: '1.4.1',
        entryPoint: v07,
        saltNonce: index,
        safe4337ModuleAddress: VENDOR.safe7579Module,
        erc7579LaunchpadAddress: VENDOR.safe7579Launchpad,
        // The launchpad has the Safe trust these attesters in the module registry, one of whom must
        // have attested each module it installs: Rhinestone's (the recipe registers its
        // attestations) or the devnet's own; with none it cannot finish setup (GS000).
        attesters: [VENDOR.rhinestoneAttester, moduleAttester],
        attestersThreshold: 1,
      });
    case 'thirdweb-v0.6':
      return toThirdwebSmartAccount({
        client,
        owner,
        salt: String(index),
        entryPoint: v06,
        factoryAddress: VENDOR.thirdwebFactory['v0.6'],
      });
    case 'thirdweb-v0.7':
      return toThirdwebSmartAccount({
        client,
        owner,
        salt: String(index),
        entryPoint: v07,
        factoryAddress: VENDOR.thirdwebFactory['v0.7'],
      });
    case 'trust':
      return toTrustSmartAccount({ client, owner, index, entryPoint: v06, factoryAddress: VENDOR.trustFactory });
    case 'etherspot':
      return toEtherspotSmartAccount({
        client,
        owners: [owner],
        index,
        entryPoint: v07,
        metaFactoryAddress: VENDOR.etherspotFactory,
      });
    case 'coinbase':
      // Version '1': the factory VENDOR.coinbaseFactory names, on EntryPoint v0.6 (viem's fixed choice).
      return toCoinbaseSmartAccount({ client, owners: [owner], nonce: index, version: '1' });
    case 'coinbase-passkey':
      // Owned by a passkey alone (its P-256 key derived from the owner's address: a devnet's, not a secret).
      return toCoinbaseSmartAccount({
        client,
        owners: [toLocalPasskey(keccak256(toBytes(`opscan-realistic-passkey-${owner.address}`)))],
        nonce: index,
        version: '1',
      });
    case 'metamask-hybrid':
      return createDeleGatorAccount('hybrid', { client, owner, index, framework: delegationFramework });
    case 'metamask-7702':
      return createDeleGatorAccount('stateless7702', { client, owner, index, framework: delegationFramework });
  }
}
