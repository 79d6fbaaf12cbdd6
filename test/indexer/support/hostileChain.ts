/**
 * What anyone can put on a chain for the price of a few transactions, to test that it stops
 * nothing: tokens whose name and symbol are any bytes, plain mints of any amount to any address,
 * and ops of the devnet's accounts that revert with any bytes. Everything is appended to
 * devnet.truth, so the stored data is compared with it as with generated traffic.
 */
import { AbiCoder, ContractFactory, Interface, getCreateAddress, id } from 'ethers';
import { recordPlainTransfers, accountFamily, type SmartAccount } from '../../../devnet/accounts.js';
import { fixtureArtifact } from '../../../devnet/artifacts.js';
import { computeDays, deployAll, type Devnet } from '../../../devnet/index.js';
import { headBlock, mineBlock, sendRawTransactions, withManualMining, type MinedBlock } from '../../../devnet/mining.js';
import { signNextOp } from '../../../devnet/ops.js';
import type { Action, PlannedCall } from '../../../devnet/actions.js';
import { Random } from '../../../devnet/random.js';
import { mineSignedBlock, tokenAddresses } from '../../../devnet/submit.js';

export const MAX_UINT256 = 2n ** 256n - 1n;

const erc20 = new Interface(['function mint(address,uint256)', 'function transfer(address,uint256)']);
const reverter = new Interface(['function fail(string)']);

/** Plain transactions from the devnet's deployer, mined in one block at the next second. */
async function minePlain(devnet: Devnet, txs: Array<{ to?: string; data: string; gasLimit: bigint }>): Promise<MinedBlock> {
  return devnet.exclusive(() =>
    withManualMining(devnet.rpc, async () => {
      const raws = [];
      for (const tx of txs) raws.push(await devnet.deployer.sign(tx));
      const hashes = await sendRawTransactions(devnet.rpc, raws);
      const block = await mineBlock(devnet.rpc, (await headBlock(devnet.rpc)).timestamp + 1, hashes);
      const failed = block.receipts.filter((r) => r.status !== '0x1');
      if (failed.length > 0) throw new Error(`hostile chain: ${failed.length} transactions reverted in block ${block.number}`);
      recordPlainTransfers(devnet, block);
      return block;
    }),
  );
}

/** A TestERC20 whose name() and symbol() return these strings (any characters, NUL included). */
export async function deployToken(devnet: Devnet, name: string, symbol: string): Promise<string> {
  const artifact = fixtureArtifact('TestERC20');
  const address = getCreateAddress({ from: devnet.deployer.address, nonce: devnet.deployer.nextNonce }).toLowerCase();
  const { data } = await new ContractFactory(artifact.abi, artifact.bytecode).getDeployTransaction(name, symbol, 18);
  await minePlain(devnet, [{ data, gasLimit: 3_000_000n + 700n * BigInt(name.length + symbol.length) }]);
  return address;
}

/** Mints `amount` of `token` to `to` in a plain transaction (an attacker's, not an op). */
export function mintPlain(devnet: Devnet, token: string, to: string, amount: bigint): Promise<MinedBlock> {
  return minePlain(devnet, [{ to: token, data: erc20.encodeFunctionData('mint', [to, amount]), gasLimit: 200_000n }]);
}

/** The devnet's deployed accounts whose execute() reverts with the callee's data as it is (not v0.8's ExecuteError). */
export function plainRevertAccounts(devnet: Devnet): SmartAccount[] {
  return devnet.traffic.accounts.filter((a) => a.address && a.deployPlanned && accountFamily(a) !== 'simple-v0.8');
}

/** One op of `account` doing `action`, alone in a bundle, mined in a block of its own. */
async function mineOp(devnet: Devnet, account: SmartAccount, action: Action, extraTokens: string[] = []): Promise<string> {
  const deployment = await deployAll(devnet);
  return devnet.exclusive(() =>
    withManualMining(devnet.rpc, async () => {
      const ctx = { devnet, deployment, rng: new Random(account.id), recipients: devnet.recipients };
      const signed = signNextOp(ctx, account, action);
      const bundle = {
        bundleIndex: 0,
        version: account.version,
        entryPoint: account.entryPoint,
        beneficiary: devnet.beneficiaries[0]!,
        ops: [signed],
      };
      const tokens = new Set([...tokenAddresses(deployment), ...extraTokens]);
      const time = (await headBlock(devnet.rpc)).timestamp + 1;
      await mineSignedBlock(devnet, deployment, [{ bundler: devnet.bundlers[0]!, bundles: [bundle] }], time, tokens);
      devnet.truth.days = computeDays(devnet.truth);
      return signed.hash;
    }),
  );
}

/** An op that transfers `amount` of `token` from its account to `to`. */
export function transferInOp(
  devnet: Devnet,
  account: SmartAccount,
  { token, to, amount }: { token: string; to: string; amount: bigint },
): Promise<string> {
  const call: PlannedCall = {
    target: token,
    value: 0n,
    data: erc20.encodeFunctionData('transfer', [to, amount]),
    transfers: [{ standard: 'ERC20', token, from: account.address, to, value: amount, tokenId: null }],
  };
  return mineOp(devnet, account, { kind: 'erc20', batch: false, calls: [call] }, [token]);
}

/** An op whose call reverts with Error(string) carrying these bytes as its string (UTF-8 or not). */
export async function revertInOp(devnet: Devnet, account: SmartAccount, reasonBytes: string): Promise<string> {
  const { reverter: target } = await deployAll(devnet);
  const args = AbiCoder.defaultAbiCoder().encode(['bytes'], [reasonBytes]).slice(2);
  // fail(string) with a string that is any bytes: the ABI encodes string and bytes alike.
  const call: PlannedCall = { target, value: 0n, data: `${reverter.getFunction('fail')!.selector}${args}`, transfers: [] };
  const expectedRevert = `${id('Error(string)').slice(0, 10)}${args}`;
  return mineOp(devnet, account, { kind: 'revertReason', batch: false, calls: [call], expectedRevert });
}
