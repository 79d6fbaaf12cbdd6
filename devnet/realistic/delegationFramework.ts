/**
 * MetaMask's Delegation Framework (its smart accounts, "DeleGators"), from @metamask/smart-accounts-kit
 * (MIT-0 or Apache-2.0): the bytecode @metamask/delegation-abis ships, CREATE2-deployed through the
 * deterministic deployer with a fixed salt (so every devnet has them at the same addresses and
 * with the same code), and accounts built and signed by the kit's own toMetaMaskSmartAccount:
 * - the Hybrid DeleGator, an ERC-1967 proxy the kit's SimpleFactory deploys by initCode;
 * - the EIP-7702 Stateless DeleGator, an EOA delegating to it by a type-4 authorization.
 * Both run on EntryPoint v0.7 and ask for their calls through ERC-7579 execute(mode, data), single
 * call or batch. The kit reports its use to MetaMask unless DO_NOT_TRACK is set (its README's
 * "Disabling analytics"): a devnet talks to nothing outside the machine, so it is set here before
 * the kit is first called.
 */
import { concat, getContractAddress, toHex, type Address, type Hex, type PublicClient } from 'viem';
import type { SmartAccount } from 'viem/account-abstraction';
import type { PrivateKeyAccount } from 'viem/accounts';
import { encodeAbiParameters } from 'viem';
import * as bytecode from '@metamask/delegation-abis/bytecode';
import { Implementation, toMetaMaskSmartAccount, type SmartAccountsEnvironment } from '@metamask/smart-accounts-kit';
import type { Rpc } from '../rpc.js';
import { sendImpersonated } from './vendorContracts.js';
import { CANONICAL_ENTRYPOINTS } from '../../shared/chain/constants.js';

/** The deterministic deployer (salt ‖ initCode), on every anvil chain. */
const CREATE2_DEPLOYER: Address = '0x4e59b44847b379578588920ca78fbf26c0b4956c';
const SALT = toHex('opscan devnet: DeleGators', { size: 32 });
/** Sends the deployments and owns the DelegationManager: no key of the devnet's (see vendorContracts.ts). */
const DEPLOYER: Address = '0x000000000000000000000000000000000000de1e';
/** HybridDeleGator's placeholder for the P-256 library it links (SCL_RIP7212). */
const SCL_PLACEHOLDER = /__\$b8f96b288d4d0429e38b8ed50fd423070f\$__/g;

export type DelegationFramework = {
  delegationManager: Address;
  simpleFactory: Address;
  hybridDeleGator: Address;
  stateless7702DeleGator: Address;
};

const withArgs = (code: string, types: string[], args: unknown[]): Hex =>
  concat([
    code as Hex,
    encodeAbiParameters(
      types.map((type) => ({ type })),
      args,
    ),
  ]);

/** Deploys what Hybrid and EIP-7702 Stateless DeleGators need (EntryPoint v0.7 is the devnet's). */
export async function deployDelegationFramework(rpc: Rpc): Promise<DelegationFramework> {
  const entryPoint = CANONICAL_ENTRYPOINTS['v0.7'];
  const create2 = async (initCode: Hex): Promise<Address> => {
    const address = getContractAddress({
      opcode: 'CREATE2',
      from: CREATE2_DEPLOYER,
      salt: SALT,
      bytecode: initCode,
    }).toLowerCase() as Address;
    if ((await rpc.call<Hex>('eth_getCode', [address, 'latest'])) === '0x')
      await sendImpersonated(rpc, DEPLOYER, { to: CREATE2_DEPLOYER, data: concat([SALT, initCode]) });
    if ((await rpc.call<Hex>('eth_getCode', [address, 'latest'])) === '0x') throw new Error(`CREATE2 did not deploy ${address}`);
    return address;
  };
  const delegationManager = await create2(withArgs(bytecode.DelegationManager, ['address'], [DEPLOYER]));
  const scl = await create2(bytecode.SCL_RIP7212);
  const hybrid = bytecode.HybridDeleGator.replace(SCL_PLACEHOLDER, scl.slice(2));
  return {
    delegationManager,
    simpleFactory: await create2(bytecode.SimpleFactory),
    hybridDeleGator: await create2(withArgs(hybrid, ['address', 'address'], [delegationManager, entryPoint])),
    stateless7702DeleGator: await create2(
      withArgs(bytecode.EIP7702StatelessDeleGator, ['address', 'address'], [delegationManager, entryPoint]),
    ),
  };
}

const environmentOf = (f: DelegationFramework): SmartAccountsEnvironment => ({
  DelegationManager: f.delegationManager,
  EntryPoint: CANONICAL_ENTRYPOINTS['v0.7'] as Address,
  SimpleFactory: f.simpleFactory,
  implementations: {
    HybridDeleGatorImpl: f.hybridDeleGator,
    EIP7702StatelessDeleGatorImpl: f.stateless7702DeleGator,
  },
  caveatEnforcers: {},
});

/**
 * The kit's account of `owner`: a Hybrid DeleGator (its `index`-th, deployed by SimpleFactory) or
 * the owner's own EOA as an EIP-7702 Stateless DeleGator.
 */
export async function createDeleGatorAccount(
  kind: 'hybrid' | 'stateless7702',
  { client, owner, index, framework }: { client: PublicClient; owner: PrivateKeyAccount; index: bigint; framework: DelegationFramework },
): Promise<SmartAccount> {
  process.env.DO_NOT_TRACK ??= '1';
  const environment = environmentOf(framework);
  const account =
    kind === 'hybrid'
      ? await toMetaMaskSmartAccount({
          client,
          implementation: Implementation.Hybrid,
          deployParams: [owner.address, [], [], []],
          deploySalt: toHex(index, { size: 32 }),
          signer: { account: owner },
          environment,
        })
      : await toMetaMaskSmartAccount({
          client,
          implementation: Implementation.Stateless7702,
          address: owner.address,
          signer: { account: owner },
          environment,
        });
  if (kind === 'hybrid') return account;
  // The kit has a 7702 account no factory, and throws when asked for one before the EOA delegates:
  // its first op carries the owner's authorization instead (traffic.ts signs it), which the bundler
  // puts in the bundle transaction's authorization list.
  return { ...account, getFactoryArgs: () => Promise.resolve({ factory: undefined, factoryData: undefined }) };
}
