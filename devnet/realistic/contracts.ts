/**
 * The real account implementations and paymasters the realistic devnet runs, each deployed from an
 * npm package's artifacts (or, for the ERC-7579 account, compiled from OpenZeppelin's npm sources
 * by devnet/contracts/build.ts), on top of what startDevnet deploys (EntryPoints v0.6-v0.8 at their
 * canonical addresses, SimpleAccountFactory per version, test tokens, a reverter).
 *
 * Canonical addresses where the package's bytecode reaches them: Safe 1.4.1's singleton, proxy
 * factory and MultiSend contracts (through Safe's singleton factory, from its presigned deployment
 * for chain 31337), Simple7702Account v0.8 (0xe6Cae83B…555B) and SimpleAccountFactory v0.9's
 * EntryPoint. Not canonical: the Safe 4337 module and its setup contract (the npm build differs from
 * the deployed one), the OZ ERC-7579 factory, the paymasters.
 *
 * EntryPoint v0.9: npm has only 0.9.0-rc.1, whose init code does not reach the canonical
 * 0x433709…d009 with the canonical salt (the released bytecode differs). Bundlers recognise v0.9 by
 * that address, so the rc.1 EntryPoint is deployed elsewhere and its runtime code copied to the
 * canonical address (anvil_setCode), with its SenderCreator put where a real deployment has it
 * (CREATE(entryPoint, nonce 1)) and trusting the canonical address. Its behaviour is rc.1's.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  concat,
  createPublicClient,
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getContractAddress,
  http,
  pad,
  parseAbi,
  parseEther,
  zeroHash,
  type Address,
  type Hex,
  type PublicClient,
  type SignedAuthorization,
} from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { type EntryPointVersion } from '../../shared/networks.js';
import { fixtureArtifact } from '../artifacts.js';
import { CREATE2_DEPLOYER } from '../deploy.js';
import type { Devnet } from '../devnet.js';
import { CANONICAL_ENTRYPOINTS } from '../../shared/chain/constants.js';

const require = createRequire(import.meta.url);
type Artifact = { abi: readonly unknown[]; bytecode: Hex };
const artifact = (path: string): Artifact => require(path) as Artifact;
const safeContract = (path: string): Artifact => artifact(`@safe-global/safe-contracts/build/artifacts/contracts/${path}`);
const safe4337 = (path: string): Artifact => artifact(`@safe-global/safe-4337/build/artifacts/contracts/${path}`);

/** Safe's CREATE2 factory (deployed by a presigned transaction per chain id). */
const SAFE_SINGLETON_FACTORY = '0x914d7fec6aac8cd542e72bca78b30650d45643d7';

export type PaymasterMode = 'verifying' | 'erc20';

export type RealisticContracts = {
  entryPoints: Record<EntryPointVersion, Address>;
  simpleAccountFactories: Record<EntryPointVersion, Address>;
  simple7702: { 'v0.8': Address; 'v0.9': Address };
  safe: {
    singleton: Address;
    proxyFactory: Address;
    multiSend: Address;
    multiSendCallOnly: Address;
    module4337: Address;
    moduleSetup: Address;
  };
  oz7579Factory: Address;
  /**
   * The ERC-7579 executor and hook the modular accounts install and uninstall (DevnetModules.sol),
   * and who attests them in the module registry Safe7579 accounts ask (the operator, moduleRegistry.ts).
   */
  erc7579Modules: { executor: Address; hook: Address; attester: Address };
  /** Pimlico's singleton paymaster per EntryPoint: verifying and ERC-20 modes in one contract. */
  paymasters: Record<EntryPointVersion, Address>;
  /** The token the ERC-20 mode charges in (the devnet's 18-decimal dDAI), and where it goes. */
  paymasterToken: Address;
  paymasterTreasury: Address;
};

/** An EOA of anvil's that signs and sends plain transactions with a locally counted nonce. */
/** A transaction the operator sends; an authorization list makes it type 4 (it sponsors EOAs' EIP-7702 delegations). */
export type OperatorTx = { to?: Address; data?: Hex; value?: bigint; gas?: bigint; authorizationList?: SignedAuthorization[] };

export type Operator = {
  account: PrivateKeyAccount;
  public: PublicClient;
  send(tx: OperatorTx): Promise<Hex>;
  /** Sends, then waits for the receipt and throws if the transaction reverted. */
  sendAndWait(tx: OperatorTx): Promise<{ contractAddress?: Address | null; transactionHash: Hex }>;
};

export function createOperator(devnet: Devnet, privateKey: Hex): Operator {
  const transport = http(devnet.rpcUrl);
  const chain = devnetChain(devnet);
  const account = privateKeyToAccount(privateKey);
  const publicClient = createPublicClient({ chain, transport, pollingInterval: 50 });
  const wallet = createWalletClient({ chain, transport, account });
  let nonce: number | undefined;
  let queue: Promise<unknown> = Promise.resolve();
  const send = (tx: OperatorTx): Promise<Hex> => {
    // One at a time, so the locally counted nonces go out in order.
    const run = queue.then(async () => {
      nonce ??= await publicClient.getTransactionCount({ address: account.address, blockTag: 'pending' });
      const hash = await wallet.sendTransaction({ ...tx, gas: tx.gas ?? 5_000_000n, nonce, chain });
      nonce++;
      return hash;
    });
    queue = run.catch(() => (nonce = undefined));
    return run;
  };
  return {
    account,
    public: publicClient,
    send,
    async sendAndWait(tx) {
      const hash = await send(tx);
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
      return receipt;
    },
  };
}

export function devnetChain(devnet: Devnet) {
  return {
    id: devnet.chainId,
    name: 'devnet',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [devnet.rpcUrl] } },
  } as const;
}

export async function deployRealisticContracts(devnet: Devnet, operator: Operator, paymasterSigner: Address): Promise<RealisticContracts> {
  const base = devnet.deployment;
  if (!base) throw new Error('deployRealisticContracts: the devnet has no deployment yet');
  const client = operator.public;
  const hasCode = async (address: Address): Promise<boolean> => ((await client.getCode({ address })) ?? '0x') !== '0x';
  const create = async (a: Artifact, types: string[] = [], args: unknown[] = []): Promise<Address> => {
    const receipt = await operator.sendAndWait({ data: withArgs(a.bytecode, types, args), gas: 15_000_000n });
    if (!receipt.contractAddress) throw new Error('contract creation without an address');
    return receipt.contractAddress.toLowerCase() as Address;
  };
  /** CREATE2 through a `salt ‖ initCode` factory (the deterministic deployer, or Safe's). */
  const create2 = async (initCode: Hex, salt: Hex = zeroHash, factory: Address = CREATE2_DEPLOYER): Promise<Address> => {
    const address = getContractAddress({ opcode: 'CREATE2', from: factory, salt, bytecode: initCode }).toLowerCase() as Address;
    if (!(await hasCode(address))) await operator.sendAndWait({ to: factory, data: concat([salt, initCode]), gas: 15_000_000n });
    if (!(await hasCode(address))) throw new Error(`CREATE2 through ${factory} did not deploy ${address}`);
    return address;
  };

  const entryPoints = { ...base.entryPoints, 'v0.9': await placeEntryPointV09(devnet, operator, create2) } as Record<
    EntryPointVersion,
    Address
  >;

  // Safe 1.4.1 at its canonical addresses, through Safe's singleton factory (its presigned tx).
  if (!(await hasCode(SAFE_SINGLETON_FACTORY))) {
    const presigned = require('@safe-global/safe-singleton-factory/artifacts/31337/deployment.json') as {
      signerAddress: Address;
      transaction: Hex;
    };
    await operator.sendAndWait({ to: presigned.signerAddress, value: parseEther('0.1') });
    await client.waitForTransactionReceipt({ hash: await client.sendRawTransaction({ serializedTransaction: presigned.transaction }) });
  }
  const viaSafeFactory = (a: Artifact, types: string[] = [], args: unknown[] = []) =>
    create2(withArgs(a.bytecode, types, args), zeroHash, SAFE_SINGLETON_FACTORY);
  const safe = {
    singleton: await viaSafeFactory(safeContract('Safe.sol/Safe.json')),
    proxyFactory: await viaSafeFactory(safeContract('proxies/SafeProxyFactory.sol/SafeProxyFactory.json')),
    multiSend: await viaSafeFactory(safeContract('libraries/MultiSend.sol/MultiSend.json')),
    multiSendCallOnly: await viaSafeFactory(safeContract('libraries/MultiSendCallOnly.sol/MultiSendCallOnly.json')),
    // Safe4337Module 0.3.0 is the EntryPoint v0.7 build.
    module4337: await viaSafeFactory(safe4337('Safe4337Module.sol/Safe4337Module.json'), ['address'], [entryPoints['v0.7']]),
    moduleSetup: await viaSafeFactory(safe4337('SafeModuleSetup.sol/SafeModuleSetup.json')),
  };

  const simpleAccountFactories = {
    ...base.simpleAccountFactories,
    'v0.9': await create(artifact('ep09/artifacts/SimpleAccountFactory.json'), ['address'], [entryPoints['v0.9']]),
  } as Record<EntryPointVersion, Address>;
  const simple7702 = {
    'v0.8': await create2(artifact('ep08/artifacts/Simple7702Account.json').bytecode),
    'v0.9': await create2(withArgs(artifact('ep09/artifacts/Simple7702Account.json').bytecode, ['address'], [entryPoints['v0.9']])),
  };
  const oz7579 = fixtureArtifact('OZ7579AccountFactory');
  const oz7579Factory = await create(
    { abi: oz7579.abi as readonly unknown[], bytecode: oz7579.bytecode as Hex },
    ['address'],
    [entryPoints['v0.8']],
  );

  const erc7579Modules = {
    executor: await create2(fixtureArtifact('DevnetExecutorModule').bytecode as Hex),
    hook: await create2(fixtureArtifact('DevnetHookModule').bytecode as Hex),
    attester: operator.account.address,
  };

  const paymasters = await deployPaymasters(paymasterSigner, entryPoints, create2);
  const depositTo = parseAbi(['function depositTo(address)']);
  for (const [version, paymaster] of Object.entries(paymasters) as Array<[EntryPointVersion, Address]>) {
    const data = encodeFunctionData({ abi: depositTo, functionName: 'depositTo', args: [paymaster] });
    await operator.sendAndWait({ to: entryPoints[version], data, value: parseEther('100') });
  }

  return {
    entryPoints,
    simpleAccountFactories,
    simple7702,
    safe,
    oz7579Factory,
    erc7579Modules,
    paymasters,
    paymasterToken: base.erc20Dai18 as Address,
    paymasterTreasury: '0x0000000000000000000000000000000000007ea5',
  };
}

/** Name → address, for GroundTruth.contracts. */
export function realisticContractNames(c: RealisticContracts): Record<string, string> {
  const out: Record<string, string> = {
    'entryPoint.v0.9': c.entryPoints['v0.9'],
    'simpleAccountFactory.v0.9': c.simpleAccountFactories['v0.9'],
    'simple7702Account.v0.8': c.simple7702['v0.8'],
    'simple7702Account.v0.9': c.simple7702['v0.9'],
    'oz7579AccountFactory.v0.8': c.oz7579Factory,
    'erc7579Module.executor': c.erc7579Modules.executor,
    'erc7579Module.hook': c.erc7579Modules.hook,
    paymasterToken: c.paymasterToken,
    paymasterTreasury: c.paymasterTreasury,
  };
  for (const [name, address] of Object.entries(c.safe)) out[`safe.${name}`] = address;
  for (const [version, address] of Object.entries(c.paymasters)) out[`pimlicoSingletonPaymaster.${version}`] = address;
  return out;
}

async function placeEntryPointV09(
  devnet: Devnet,
  operator: Operator,
  create2: (initCode: Hex, salt?: Hex) => Promise<Address>,
): Promise<Address> {
  const canonical = CANONICAL_ENTRYPOINTS['v0.9'] as Address;
  const client = operator.public;
  if (((await client.getCode({ address: canonical })) ?? '0x') !== '0x') return canonical;
  const rc1 = await create2(artifact('ep09/artifacts/EntryPoint.json').bytecode);
  const senderCreatorAbi = parseAbi(['function senderCreator() view returns (address)']);
  const rc1SenderCreator = (
    await client.readContract({ address: rc1, abi: senderCreatorAbi, functionName: 'senderCreator' })
  ).toLowerCase();
  const senderCreator = getContractAddress({ from: canonical, nonce: 1n }).toLowerCase() as Address;
  const swap = (code: Hex, from: string, to: string): Hex => {
    const out = code.toLowerCase().split(from.slice(2)).join(to.slice(2)) as Hex;
    if (out === code.toLowerCase()) throw new Error(`EntryPoint v0.9 code does not embed ${from}`);
    return out;
  };
  const testClient = createTestClient({ chain: devnetChain(devnet), transport: http(devnet.rpcUrl), mode: 'anvil' });
  const entryPointCode = (await client.getCode({ address: rc1 })) ?? '0x';
  const senderCreatorCode = (await client.getCode({ address: rc1SenderCreator as Address })) ?? '0x';
  await testClient.setCode({ address: canonical, bytecode: swap(entryPointCode, rc1SenderCreator, senderCreator) });
  await testClient.setCode({ address: senderCreator, bytecode: swap(senderCreatorCode, rc1, canonical) });
  const placed = (await client.readContract({ address: canonical, abi: senderCreatorAbi, functionName: 'senderCreator' })).toLowerCase();
  if (placed !== senderCreator) throw new Error(`EntryPoint v0.9 at ${canonical} reports SenderCreator ${placed}, not ${senderCreator}`);
  return canonical;
}

/**
 * A module of @pimlico/mock-paymaster, whose `exports` name only its server (which needs a bundler
 * to run): its init codes and ABIs are plain modules over viem, loaded by path.
 */
export function mockPaymasterModule(file: 'constants.js' | 'helpers/abi.js'): Promise<unknown> {
  const dir = join(dirname(require.resolve('@pimlico/mock-paymaster')), '..', '_esm');
  return import(pathToFileURL(join(dir, file)).href);
}

/**
 * Pimlico's singleton paymaster, from @pimlico/mock-paymaster's init code (v0.6, v0.7, v0.8; the
 * v0.8 build serves v0.9 unchanged, its EntryPoint a constructor argument).
 */
async function deployPaymasters(
  signer: Address,
  entryPoints: Record<EntryPointVersion, Address>,
  create2: (initCode: Hex) => Promise<Address>,
): Promise<Record<EntryPointVersion, Address>> {
  const initCodes = (await mockPaymasterModule('constants.js')) as Record<
    'getSingletonPaymaster06InitCode' | 'getSingletonPaymaster07InitCode' | 'getSingletonPaymaster08InitCode',
    (owner: Address) => Hex
  >;
  const v08 = initCodes.getSingletonPaymaster08InitCode(signer).toLowerCase();
  const v09 = v08.replace(pad(entryPoints['v0.8']).slice(2), pad(entryPoints['v0.9']).slice(2)) as Hex;
  if (v09 === v08) throw new Error('the v0.8 singleton paymaster init code does not name EntryPoint v0.8');
  return {
    'v0.6': await create2(initCodes.getSingletonPaymaster06InitCode(signer)),
    'v0.7': await create2(initCodes.getSingletonPaymaster07InitCode(signer)),
    'v0.8': await create2(v08 as Hex),
    'v0.9': await create2(v09),
  };
}

function withArgs(bytecode: Hex, types: string[], args: unknown[]): Hex {
  if (types.length === 0) return bytecode;
  return concat([
    bytecode,
    encodeAbiParameters(
      types.map((type) => ({ type })),
      args,
    ),
  ]);
}
