/**
 * The smart accounts the traffic uses: who owns each, which factory deploys it, its counterfactual
 * address (asked from the factory's getAddress), its nonce per key, and its funding (ETH through
 * anvil_setBalance, ERC-20 through a mintBatch transaction, so tokens exist before the first op).
 */
import { AbiCoder, Interface, SigningKey, computeAddress, concat, keccak256, parseEther, toBeHex } from 'ethers';
import type { AccountFamily } from './calls.js';
import type { Deployment } from './deploy.js';
import type { Devnet } from './devnet.js';
import { mineBlock, sendRawTransactions, type MinedBlock } from './mining.js';
import { decodeTransferLog } from './receipts.js';
import type { SignatureScheme, EpVersion } from './userop.js';
import { TOPICS } from '../shared/chain/constants.js';

export type AccountKind = 'simple' | 'mini';

export type SmartAccount = {
  id: number;
  version: EpVersion;
  kind: AccountKind;
  owner: SigningKey;
  salt: bigint;
  factory: string;
  entryPoint: string;
  /** Counterfactual address; '' until resolved from the factory. */
  address: string;
  /** An op carrying this account's initCode has been signed (and not rolled back by a reorg). */
  deployPlanned: boolean;
  /** Next sequence number per nonce key. */
  nonces: Map<bigint, bigint>;
  /** Block holding its ERC-20 funding (a reorg below it must fund it again). */
  fundedAtBlock: number;
};

export const ACCOUNT_ETH = parseEther('100');
export const ACCOUNT_ERC20_UNITS = 1_000_000n; // whole tokens of each ERC-20

const factoryInterface = new Interface([
  'function createAccount(address owner,uint256 salt)',
  'function getAddress(address owner,uint256 salt) view returns (address)',
]);
const erc20 = new Interface(['function mintBatch(address[],uint256)']);

export function accountFamily(a: SmartAccount): AccountFamily {
  return a.kind === 'mini' ? 'mini' : (`simple-${a.version}` as AccountFamily);
}

/** SimpleAccount v0.6/v0.7 sign the eth-signed-message hash; v0.8 SimpleAccount and MiniAccount the raw hash. */
export function signatureScheme(a: SmartAccount): SignatureScheme {
  return a.kind === 'simple' && a.version !== 'v0.8' ? 'eth-signed-message' : 'raw-hash';
}

export function initCode(a: SmartAccount): string {
  return concat([
    a.factory,
    factoryInterface.encodeFunctionData('createAccount', [computeAddress(a.owner.publicKey), a.salt]),
  ]).toLowerCase();
}

/** A new account (address unresolved). Owner keys derive from the id, so runs are reproducible. */
export function newAccount(devnet: Devnet, d: Deployment, version: EpVersion, kind: AccountKind): SmartAccount {
  const id = devnet.traffic.nextAccountId++;
  const owner = new SigningKey(keccak256(AbiCoder.defaultAbiCoder().encode(['string', 'uint256'], ['opscan-devnet-account-owner', id])));
  const account: SmartAccount = {
    id,
    version,
    kind,
    owner,
    salt: BigInt(id),
    factory: kind === 'mini' ? d.miniAccountFactories[version] : d.simpleAccountFactories[version],
    entryPoint: d.entryPoints[version],
    address: '',
    deployPlanned: false,
    nonces: new Map(),
    fundedAtBlock: -1,
  };
  devnet.traffic.accounts.push(account);
  return account;
}

/** Asks each factory for its accounts' addresses (one JSON-RPC batch). */
export async function resolveAddresses(devnet: Devnet, accounts: SmartAccount[]): Promise<void> {
  const todo = accounts.filter((a) => !a.address);
  const results = await devnet.rpc.batch<string>(
    todo.map((a) => [
      'eth_call',
      [{ to: a.factory, data: factoryInterface.encodeFunctionData('getAddress', [computeAddress(a.owner.publicKey), a.salt]) }, 'latest'],
    ]),
  );
  todo.forEach((a, i) => {
    a.address = String(factoryInterface.decodeFunctionResult('getAddress', results[i] ?? '0x')[0]).toLowerCase();
  });
}

/**
 * Gives each account ETH (state edit, no transaction) and both ERC-20s (a mintBatch transaction
 * per token), mined in one block at `timestamp`. Must run while automine is off.
 */
export async function fundAccounts(devnet: Devnet, d: Deployment, accounts: SmartAccount[], timestamp: number): Promise<MinedBlock> {
  const { rpc, deployer } = devnet;
  await rpc.batch(accounts.map((a) => ['anvil_setBalance', [a.address, toBeHex(ACCOUNT_ETH)]]));
  const addresses = accounts.map((a) => a.address);
  const raws: string[] = [];
  for (const [token, decimals] of [
    [d.erc20Usd6, 6n],
    [d.erc20Dai18, 18n],
  ] as const) {
    const data = erc20.encodeFunctionData('mintBatch', [addresses, ACCOUNT_ERC20_UNITS * 10n ** decimals]);
    raws.push(await deployer.sign({ to: token, data, gasLimit: 100_000n + 60_000n * BigInt(accounts.length) }));
  }
  const block = await mineBlock(rpc, timestamp, await sendRawTransactions(rpc, raws));
  const failed = block.receipts.filter((r) => r.status !== '0x1');
  if (failed.length > 0) throw new Error(`account funding failed in block ${block.number}`);
  for (const a of accounts) a.fundedAtBlock = block.number;
  // The mints are plain transactions: an explorer's address page lists them (INDEXER_TRANSFERS=known).
  recordPlainTransfers(devnet, block);
  return block;
}

/** Appends the ERC-20 transfers of a block of plain transactions (no bundle in them) to devnet.truth. */
export function recordPlainTransfers(devnet: Devnet, block: MinedBlock): void {
  for (const r of block.receipts)
    for (const l of r.logs) {
      if (l.topics[0] !== TOPICS.transfer || l.topics.length !== 3) continue;
      const t = decodeTransferLog(l);
      devnet.truth.plainTransfers.push({
        userOpHash: null,
        standard: 'ERC20',
        ...t,
        transactionHash: r.transactionHash.toLowerCase(),
        logIndex: Number(l.logIndex),
        blockNumber: block.number,
      });
    }
}

/**
 * Gets the accounts that planning just created ready for their first op: resolves their addresses
 * and funds them in a block mined at `timestamp`. Returns that block, or null when there were none.
 */
export async function prepareNewAccounts(devnet: Devnet, d: Deployment, timestamp: number): Promise<MinedBlock | null> {
  const fresh = devnet.traffic.accounts.filter((a) => !a.address);
  if (fresh.length === 0) return null;
  await resolveAddresses(devnet, fresh);
  return fundAccounts(devnet, d, fresh, timestamp);
}
