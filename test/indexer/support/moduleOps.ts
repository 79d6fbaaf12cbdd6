/**
 * ERC-7579 module installs and uninstalls on the plain devnet: OpenZeppelin's AccountERC7579
 * (devnet/contracts/OZ7579Account.sol) on EntryPoint v0.8, whose ops call the account's own
 * installModule / uninstallModule with the devnet's executor module, signed by the owner and sent
 * straight to handleOps by one of the devnet's bundler EOAs (every op its own block). What the chain
 * then holds is read back with eth_getLogs, for tests to compare opscan with.
 */
import { AbiCoder, Interface, Wallet, concat, getCreateAddress, solidityPacked, zeroPadValue, type InterfaceAbi } from 'ethers';
import { fixtureArtifact } from '../../../devnet/artifacts.js';
import type { Devnet } from '../../../devnet/index.js';
import { encodeHandleOps, userOpHash, type UserOp } from '../../../devnet/userop.js';
import { TOPICS } from '../../../shared/chain/constants.js';

const FACTORY = new Interface(fixtureArtifact('OZ7579AccountFactory').abi);
const ACCOUNT = new Interface([
  'function execute(bytes32 mode, bytes executionCalldata)',
  'function installModule(uint256 moduleTypeId, address module, bytes initData)',
  'function uninstallModule(uint256 moduleTypeId, address module, bytes deInitData)',
]);
const NONCES = new Interface(['function getNonce(address sender, uint192 key) view returns (uint256)']);
/** ERC-7579 execution mode: single call, revert on failure. */
const SINGLE = zeroPadValue('0x', 32);

export type ModularDevnet = { factory: string; executor: string; account: string; owner: Wallet };

type MinedReceipt = { status: string; logs: Array<{ topics: string[]; data: string }> };

/** The transaction's receipt once it is mined (the devnet may mine it a moment after it is sent); null after 30 s. */
async function minedReceipt(devnet: Devnet, hash: string): Promise<MinedReceipt | null> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    const receipt = await devnet.rpc.call<MinedReceipt | null>('eth_getTransactionReceipt', [hash]);
    if (receipt) return receipt;
  }
  return null;
}

async function sendAndMine(devnet: Devnet, tx: { to?: string; data: string; value?: bigint; gasLimit: bigint }): Promise<string> {
  const signer = devnet.deployer;
  const hash = await devnet.rpc.call<string>('eth_sendRawTransaction', [await signer.sign(tx)]);
  const receipt = await minedReceipt(devnet, hash);
  if (receipt?.status !== '0x1') throw new Error(`transaction ${hash} ${receipt ? 'reverted' : 'was not mined within 30 s'}`);
  return hash;
}

async function deploy(devnet: Devnet, abi: InterfaceAbi, bytecode: string, args: unknown[] = []): Promise<string> {
  const address = getCreateAddress({ from: devnet.deployer.address, nonce: devnet.deployer.nextNonce }).toLowerCase();
  const encodedArgs = args.length === 0 ? '0x' : new Interface(abi).encodeDeploy(args);
  await sendAndMine(devnet, { data: concat([bytecode, encodedArgs]), gasLimit: 8_000_000n });
  return address;
}

/** The factory and the executor module deployed, and an account's address (counterfactual, funded). */
export async function setUpModularAccount(devnet: Devnet): Promise<ModularDevnet> {
  const d = devnet.deployment!;
  const factoryArtifact = fixtureArtifact('OZ7579AccountFactory');
  const executorArtifact = fixtureArtifact('DevnetExecutorModule');
  const factory = await deploy(devnet, factoryArtifact.abi, factoryArtifact.bytecode, [d.entryPoints['v0.8']]);
  const executor = await deploy(devnet, executorArtifact.abi, executorArtifact.bytecode);
  const owner = new Wallet(Wallet.createRandom().privateKey);
  const [address] = FACTORY.decodeFunctionResult(
    'getAddress',
    await devnet.rpc.call<string>('eth_call', [
      { to: factory, data: FACTORY.encodeFunctionData('getAddress', [owner.address, 0n]) },
      'latest',
    ]),
  ) as unknown as [string];
  const account = address.toLowerCase();
  await sendAndMine(devnet, { to: account, data: '0x', value: 10n ** 18n, gasLimit: 21_000n });
  return { factory, executor, account, owner };
}

/** One op of the account calling its own installModule or uninstallModule (deploying it when it has no code). */
export async function sendModuleOp(
  devnet: Devnet,
  m: ModularDevnet,
  action: 'install' | 'uninstall',
): Promise<{ userOpHash: string; transactionHash: string }> {
  const entryPoint = devnet.deployment!.entryPoints['v0.8'];
  const deployed = (await devnet.rpc.call<string>('eth_getCode', [m.account, 'latest'])) !== '0x';
  const [nonce] = NONCES.decodeFunctionResult(
    'getNonce',
    await devnet.rpc.call<string>('eth_call', [{ to: entryPoint, data: NONCES.encodeFunctionData('getNonce', [m.account, 0n]) }, 'latest']),
  ) as unknown as [bigint];
  const change =
    action === 'install'
      ? ACCOUNT.encodeFunctionData('installModule', [2n, m.executor, '0x'])
      : ACCOUNT.encodeFunctionData('uninstallModule', [2n, m.executor, '0x']);
  const op: UserOp = {
    sender: m.account,
    nonce,
    initCode: deployed ? '0x' : concat([m.factory, FACTORY.encodeFunctionData('createAccount', [m.owner.address, 0n])]),
    callData: ACCOUNT.encodeFunctionData('execute', [SINGLE, solidityPacked(['address', 'uint256', 'bytes'], [m.account, 0n, change])]),
    callGasLimit: 500_000n,
    verificationGasLimit: 1_000_000n,
    preVerificationGas: 100_000n,
    maxFeePerGas: 20_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    paymasterAndData: '0x',
    signature: '0x',
  };
  const hash = userOpHash(op, 'v0.8', entryPoint, devnet.chainId);
  op.signature = m.owner.signingKey.sign(hash).serialized;
  const bundler = devnet.bundlers[0]!;
  const raw = await bundler.sign({ to: entryPoint, data: encodeHandleOps('v0.8', [op], bundler.address), gasLimit: 3_000_000n });
  const transactionHash = await devnet.rpc.call<string>('eth_sendRawTransaction', [raw]);
  const receipt = await minedReceipt(devnet, transactionHash);
  if (receipt?.status !== '0x1') throw new Error(`handleOps ${transactionHash} ${receipt ? 'reverted' : 'was not mined within 30 s'}`);
  const event = receipt.logs.find((l) => l.topics[0] === TOPICS.userOperationEvent);
  const success = event ? (AbiCoder.defaultAbiCoder().decode(['uint256', 'bool'], event.data)[1] as boolean) : false;
  if (!success) throw new Error(`op ${hash} of ${m.account} did not succeed`);
  return { userOpHash: hash.toLowerCase(), transactionHash: transactionHash.toLowerCase() };
}

/** A module event as the chain has it (eth_getLogs), in the fields getAccountModules answers. */
export type ChainModuleEvent = {
  account: string;
  action: 'installed' | 'uninstalled';
  moduleTypeId: string;
  module: string;
  blockNumber: string;
  transactionHash: string;
  logIndex: number;
};

/** Every ModuleInstalled / ModuleUninstalled log of the chain, in order. */
export async function chainModuleEvents(rpc: Devnet['rpc']): Promise<ChainModuleEvent[]> {
  const logs = await rpc.call<
    Array<{ address: string; topics: string[]; data: string; blockNumber: string; transactionHash: string; logIndex: string }>
  >('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest', topics: [[TOPICS.moduleInstalled, TOPICS.moduleUninstalled]] }]);
  return logs.map((l) => {
    const [moduleTypeId, module] = AbiCoder.defaultAbiCoder().decode(['uint256', 'address'], l.data) as unknown as [bigint, string];
    return {
      account: l.address.toLowerCase(),
      action: l.topics[0] === TOPICS.moduleInstalled ? 'installed' : 'uninstalled',
      moduleTypeId: moduleTypeId.toString(),
      module: module.toLowerCase(),
      blockNumber: BigInt(l.blockNumber).toString(),
      transactionHash: l.transactionHash.toLowerCase(),
      logIndex: Number(l.logIndex),
    };
  });
}

/** The pairs a history leaves installed, recomputed here: replayed event by event. */
export function installedAfter(events: ReadonlyArray<{ action: string; moduleTypeId: string; module: string }>): string[] {
  const installed = new Set<string>();
  for (const e of events) {
    const key = `${e.moduleTypeId}:${e.module}`;
    if (e.action === 'installed') installed.add(key);
    else installed.delete(key);
  }
  return [...installed].sort();
}
