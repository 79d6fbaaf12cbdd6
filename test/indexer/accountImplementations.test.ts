/**
 * Naming account implementations on a real chain: anvil with the vendors' contracts at their
 * mainnet addresses (the realaccounts recipe, replayed by devnet/realistic/vendorContracts.ts), one
 * account of each of the realistic devnet's vendor account types deployed through its factory (built
 * as the devnet builds it, named as its ACCOUNT_KINDS entry says; the factory calldata sent as a plain
 * transaction; the EIP-7702 Stateless DeleGator by its owner's authorization), other vendor builds
 * permissionless knows, EIP-7702 delegations,
 * the devnet's own builds at other addresses (named by code hash), and one real op (a Safe set up
 * through Rhinestone's Safe7579 launchpad by EntryPoint v0.7's handleOps) indexed end to end: the
 * name in accounts, /v0, GraphQL and a webhook body.
 */
import { createRequire } from 'node:module';
import { expect } from 'chai';
import request from 'supertest';
import {
  concat,
  createPublicClient,
  createWalletClient,
  decodeEventLog,
  defineChain,
  encodeAbiParameters,
  encodeFunctionData,
  http,
  parseAbi,
  parseEther,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount } from 'viem/accounts';
import { entryPoint07Abi, toPackedUserOperation, type SmartAccount } from 'viem/account-abstraction';
import { toSafeSmartAccount, toSimpleSmartAccount } from 'permissionless/accounts';
import { ANVIL_MNEMONIC, startChain, type Chain } from '../../devnet/chain.js';
import { ACCOUNT_KINDS } from '../../devnet/realistic/accounts.js';
import { VENDOR_ACCOUNT_TYPES, createVendorAccount, type VendorAccountType } from '../../devnet/realistic/vendorAccounts.js';
import { deployVendorContracts } from '../../devnet/realistic/vendorContracts.js';
import { deployDelegationFramework, type DelegationFramework } from '../../devnet/realistic/delegationFramework.js';
import { startIndexer } from '../../indexer/index.js';
import { identifyAccounts, nameAccounts, type NamingMemory } from '../../indexer/sync/nameAccounts.js';
import { RpcClient } from '../../indexer/sync/rpcClient.js';
import * as accounts from '../../shared/db/tables/accounts.js';
import { ensureChainPartitions } from '../../shared/db/partitions.js';
import * as webhookOps from '../../shared/db/tables/webhookOps.js';
import { createApp } from '../../server/app.js';
import { userOperationBody } from '../../webhooks/eventBodies.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';
import { devnetConfig, quietLogger } from './support.js';
import { CANONICAL_ENTRYPOINTS } from '../../shared/chain/constants.js';

const require = createRequire(import.meta.url);

const EP = CANONICAL_ENTRYPOINTS as Readonly<Record<keyof typeof CANONICAL_ENTRYPOINTS, Address>>;
const EP06 = { address: EP['v0.6'], version: '0.6' } as const;
const EP07 = { address: EP['v0.7'], version: '0.7' } as const;
const EP08 = EP['v0.8'];
const EP09 = EP['v0.9'];
/** The recipe's SIMPLE_ACCOUNT_IMPLEMENTATION_V08: Simple7702Account v0.8 (no account type of the devnet delegates to it). */
const SIMPLE7702_V08 = '0xe6cae83bde06e4c305530e199d7217f42808555b';

type Artifact = { bytecode: Hex; deployedBytecode?: Hex };

describe('account implementations named from the chain', function () {
  this.timeout(300_000);
  const t = useTestDb();
  let chain: Chain;
  /** Each account deployed here, by the name it must get. */
  const expected = new Map<string, string>();
  let safe7579Op: { userOpHash: string; sender: string };

  before(async function () {
    chain = await startChain();
    const viemChain = defineChain({
      id: 31337,
      name: 'anvil',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [chain.rpcUrl] } },
    });
    const client = createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl) });
    const sender = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 1 });
    const wallet = createWalletClient({ chain: viemChain, transport: http(chain.rpcUrl), account: sender });
    const send = async (tx: Parameters<typeof wallet.sendTransaction>[0]) => {
      const receipt = await client.waitForTransactionReceipt({ hash: await wallet.sendTransaction(tx) });
      if (receipt.status !== 'success') throw new Error(`transaction ${receipt.transactionHash} reverted`);
      return receipt;
    };
    const deploy = async (artifact: Artifact, types: string[] = [], args: unknown[] = []): Promise<Address> =>
      (
        await send({
          data: concat([
            artifact.bytecode,
            encodeAbiParameters(
              types.map((type) => ({ type })),
              args,
            ),
          ]),
        })
      ).contractAddress!;

    // On a fresh chain the recipe deploys the EntryPoints v0.6–v0.8 and Safe's contracts too.
    await deployVendorContracts(chain.rpc);
    const delegationFramework: DelegationFramework = await deployDelegationFramework(chain.rpc);

    const owner = privateKeyToAccount(generatePrivateKey());
    const viaFactory = async (name: string, account: SmartAccount) => {
      const { factory, factoryData } = await account.getFactoryArgs();
      await send({ to: factory!, data: factoryData! });
      expected.set(account.address.toLowerCase(), name);
    };
    /** A vendor account as the realistic devnet builds it, for `owner` (its `index`-th account). */
    const vendorAccount = (type: VendorAccountType, index: bigint, accountOwner = owner) =>
      createVendorAccount(type, {
        client,
        owner: accountOwner,
        index,
        entryPoint: EP[ACCOUNT_KINDS[type].entryPoint],
        delegationFramework,
        // Safe7579 accounts trust the sender as a module attester, as the devnet's trust its operator.
        moduleAttester: sender.address,
      });
    // Each vendor type through its factory; the Safe7579 account is set up by its first op (below),
    // the EIP-7702 Stateless DeleGator by its owner's authorization.
    for (const [i, type] of VENDOR_ACCOUNT_TYPES.entries())
      if (type !== 'safe7579' && type !== 'metamask-7702')
        await viaFactory(ACCOUNT_KINDS[type].implementation, await vendorAccount(type, BigInt(i)));
    // Barz's code is the same for every account: a second owner's account is named alike.
    await viaFactory(ACCOUNT_KINDS.trust.implementation, await vendorAccount('trust', 0n, privateKeyToAccount(generatePrivateKey())));
    // Vendor builds no account type of the devnet runs: permissionless' defaults at their mainnet addresses.
    await viaFactory('SimpleAccount v0.6', await toSimpleSmartAccount({ client, owner, entryPoint: EP06 }));
    await viaFactory('SimpleAccount v0.7', await toSimpleSmartAccount({ client, owner, entryPoint: EP07 }));
    await viaFactory(
      'Safe 1.4.1 + Safe4337Module 0.2.0',
      await toSafeSmartAccount({ client, owners: [owner], version: '1.4.1', entryPoint: EP06 }),
    );
    await viaFactory(
      'Safe 1.4.1 + Safe4337Module 0.3.0',
      await toSafeSmartAccount({ client, owners: [owner], version: '1.4.1', entryPoint: EP07 }),
    );
    await viaFactory(
      'Safe 1.5.0 + Safe4337Module 0.3.0',
      await toSafeSmartAccount({ client, owners: [owner], version: '1.5.0', entryPoint: EP07 }),
    );

    // SimpleAccountFactory v0.8 deploys only for the EntryPoint's SenderCreator.
    const simple08 = await toSimpleSmartAccount({ client, owner, entryPoint: { address: EP08, version: '0.8' } });
    const senderCreator = await client.readContract({
      address: EP08,
      abi: parseAbi(['function senderCreator() view returns (address)']),
      functionName: 'senderCreator',
    });
    const { factory, factoryData } = await simple08.getFactoryArgs();
    await chain.rpc.call('anvil_impersonateAccount', [senderCreator]);
    await chain.rpc.call('anvil_setBalance', [senderCreator, '0xde0b6b3a7640000']);
    await client.waitForTransactionReceipt({
      hash: await chain.rpc.call<Hex>('eth_sendTransaction', [{ from: senderCreator, to: factory, data: factoryData }]),
    });
    expected.set(simple08.address.toLowerCase(), 'SimpleAccount v0.8');

    // EIP-7702: EOAs delegating to Simple7702Account v0.8 (mainnet address) and to the ep09 build
    // deployed elsewhere (named by its code hash).
    const simple7702v09 = await deploy(require('ep09/artifacts/Simple7702Account.json') as Artifact, ['address'], [EP09]);
    for (const [delegate, name] of [
      [SIMPLE7702_V08, 'Simple7702Account v0.8'],
      [simple7702v09, 'Simple7702Account v0.9'],
      [delegationFramework.stateless7702DeleGator, ACCOUNT_KINDS['metamask-7702'].implementation],
    ] as const) {
      const eoa = privateKeyToAccount(generatePrivateKey());
      const authorization = await eoa.signAuthorization({ chainId: 31337, address: delegate, nonce: 0 });
      await send({ to: eoa.address, authorizationList: [authorization] });
      expected.set(eoa.address.toLowerCase(), name);
    }

    // The devnet's own builds at addresses of their own: SimpleAccount v0.6 from the npm factory
    // (UUPS: its implementation holds its own address, masked in the code hash), OZ's ERC-7579 account.
    const createAccount = parseAbi(['function createAccount(address owner, uint256 salt) returns (address)']);
    for (const [factoryAddress, name] of [
      [await deploy(require('ep06/artifacts/SimpleAccountFactory.json') as Artifact, ['address'], [EP06.address]), 'SimpleAccount v0.6'],
      [
        await deploy(require('../../devnet/contracts/artifacts/OZ7579AccountFactory.json') as Artifact, ['address'], [EP08]),
        'OpenZeppelin AccountERC7579',
      ],
    ] as const) {
      const args = [owner.address, 1n] as const;
      const { result } = await client.simulateContract({
        address: factoryAddress,
        abi: createAccount,
        functionName: 'createAccount',
        args,
        account: sender,
      });
      await send({ to: factoryAddress, data: encodeFunctionData({ abi: createAccount, functionName: 'createAccount', args }) });
      expected.set(result.toLowerCase(), name);
    }

    // A Safe set up through the Safe7579 launchpad: its first op (deployment and setup) sent to
    // EntryPoint v0.7's handleOps directly, as a bundler would.
    const safe7579 = await vendorAccount('safe7579', 0n);
    await send({ to: safe7579.address, value: parseEther('1') });
    const args = await safe7579.getFactoryArgs();
    const unsigned = {
      sender: safe7579.address,
      nonce: await safe7579.getNonce(),
      factory: args.factory,
      factoryData: args.factoryData,
      callData: await safe7579.encodeCalls([{ to: owner.address, value: 1n, data: '0x' }]),
      callGasLimit: 1_000_000n,
      verificationGasLimit: 3_000_000n,
      preVerificationGas: 100_000n,
      maxFeePerGas: 5_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      signature: '0x' as Hex,
    };
    const op = { ...unsigned, signature: await safe7579.signUserOperation({ ...unsigned, chainId: 31337 }) };
    const receipt = await send({
      to: EP07.address,
      data: encodeFunctionData({ abi: entryPoint07Abi, functionName: 'handleOps', args: [[toPackedUserOperation(op)], sender.address] }),
      gas: 10_000_000n,
    });
    const event = receipt.logs
      .map((l) => {
        try {
          return decodeEventLog({ abi: entryPoint07Abi, data: l.data, topics: l.topics });
        } catch {
          return null;
        }
      })
      .find((e) => e?.eventName === 'UserOperationEvent');
    if (event?.eventName !== 'UserOperationEvent' || !event.args.success) throw new Error('the Safe7579 op did not succeed');
    safe7579Op = { userOpHash: event.args.userOpHash.toLowerCase(), sender: safe7579.address.toLowerCase() };
    expected.set(safe7579Op.sender, ACCOUNT_KINDS.safe7579.implementation);
  });

  after(async () => {
    await chain?.stop();
  });

  const rpcClient = () => new RpcClient({ urls: [chain.rpcUrl], log: quietLogger(), retries: 1 });

  it('names every vendor account, 7702 delegation and devnet build from its code, slots and accountId', async () => {
    const slice = [...expected.keys()].map((address) => ({ address, factory: null, block: 0, blockTag: 'latest' }));
    const named = await identifyAccounts(rpcClient(), slice, new Map());
    expect(Object.fromEntries(named.map((n) => [n.address, n.implementation]))).to.deep.equal(Object.fromEntries(expected));
    // Every name of the team's list this chain can show (counting versions) is among them.
    expect(new Set(expected.values()).size).to.equal(29);
  });

  it('asks only what each code calls for: 1 call for a 7702 account, 2 for an ERC-1967 proxy, 3 for a Safe', async () => {
    for (const [name, calls] of [
      ['Simple7702Account v0.8', 1],
      ['Coinbase Smart Wallet v1', 2],
      // The DeleGators are not at their mainnet addresses here: their implementation's code is read
      // once more, to match its hash (then remembered for the process's life).
      ['MetaMask EIP-7702 Stateless DeleGator 1.3.0', 2],
      ['MetaMask Hybrid DeleGator 1.3.0', 3],
      ['SimpleAccount v0.7', 2],
      ['Kernel v3.3', 2],
      ['Safe 1.4.1 + Safe4337Module 0.3.0', 3],
      ['Biconomy Smart Account v2.0.0', 3],
    ] as const) {
      const address = [...expected].find(([, n]) => n === name)![0];
      const rpc = rpcClient();
      const named = await identifyAccounts(rpc, [{ address, factory: null, block: 0, blockTag: 'latest' }], new Map());
      expect([named[0]!.implementation, rpc.stats.calls], name).to.deep.equal([name, calls]);
    }
  });

  it('says "unknown" for code it does not know and for an address without code, never a guess', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    const slice = [EP07.address, stranger].map((address) => ({ address, factory: null, block: 0, blockTag: 'latest' }));
    const named = await identifyAccounts(rpcClient(), slice, new Map());
    expect(named.map((n) => n.implementation)).to.deep.equal(['unknown', 'unknown']);
  });

  it('falls back to a known factory when the code settles nothing', async () => {
    const stranger = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
    const slice = [{ address: EP07.address, factory: '0x85e23b94e7f5e9cc1ff78bce78cfb15b81f0df00', block: 0, blockTag: 'latest' }];
    expect((await identifyAccounts(rpcClient(), slice, new Map()))[0]!.implementation).to.equal('Thirdweb Account v0.6');
    // Without code there is no account to name, whatever the factory.
    const none = [{ address: stranger, factory: '0x85e23b94e7f5e9cc1ff78bce78cfb15b81f0df00', block: 0, blockTag: 'latest' }];
    expect((await identifyAccounts(rpcClient(), none, new Map()))[0]!.implementation).to.equal('unknown');
  });

  it('reads accounts at the latest block once the node cannot answer at theirs (a node without old state)', async () => {
    await ensureChainPartitions(t.db, 31337);
    const [address, name] = [...expected].find(([, n]) => n === 'Kernel v3.1')!;
    // First seen at a block this node does not have: its state there cannot be read.
    await accounts.upsertActivity(t.db, 31337, [
      { address, userOps: 1, firstOpBlock: 1_000_000_000, lastOpBlock: 1_000_000_000, eip7702: false, deployment: null },
    ]);
    const memory: NamingMemory = { codeHashes: new Map(), readAtLatest: false };
    const log = quietLogger();
    const result = await nameAccounts({ db: t.db, rpc: rpcClient(), chainId: 31337, log, sliceSize: 10, memory, shouldStop: () => false });
    expect(result).to.deep.include({ named: 1, complete: true, stalled: false });
    expect(memory.readAtLatest).to.equal(true);
    expect((await accounts.find(t.db, 31337, address))?.implementation).to.equal(name);
  });

  it('the indexer names the account it indexes; /v0, GraphQL and the webhook body carry the name', async () => {
    const indexer = startIndexer({ db: t.db, config: devnetConfig(chain.rpcUrl), log: quietLogger() });
    try {
      await indexer.syncNow();
      const chainId = 31337;
      expect((await accounts.find(t.db, chainId, safe7579Op.sender))?.implementation).to.equal('Safe 1.4.1 + Safe7579 1.0.0');

      // A reorg rebuilds the row (implementation null again): the next pass names it again.
      await accounts.recompute(t.db, chainId, [safe7579Op.sender]);
      expect((await accounts.find(t.db, chainId, safe7579Op.sender))?.implementation).to.equal(null);
      await indexer.syncNow();
      expect((await accounts.find(t.db, chainId, safe7579Op.sender))?.implementation).to.equal('Safe 1.4.1 + Safe7579 1.0.0');
    } finally {
      await indexer.stop();
    }

    const deps = testDeps(t.db, { RATE_LIMIT_PER_SECOND: '1000000' });
    try {
      const key = await createTestKey(t.db, 'naming', 1_000_000);
      const api = request(createApp(deps));
      const op = await api.get('/v0/getUserOp').query({ hash: safe7579Op.userOpHash, network: 'devnet' }).set('x-api-key', key);
      expect(op.status, JSON.stringify(op.body)).to.equal(200);
      expect(op.body.userOps[0].implementation).to.equal('Safe 1.4.1 + Safe7579 1.0.0');
      const activity = await api
        .get('/v0/getAddressActivity')
        .query({ address: safe7579Op.sender, network: 'devnet' })
        .set('x-api-key', key);
      expect(activity.body.accountDetail.implementation).to.equal('Safe 1.4.1 + Safe7579 1.0.0');
      expect(activity.body.accountDetail.userOps[0].implementation).to.equal('Safe 1.4.1 + Safe7579 1.0.0');
      const gql = await api
        .post('/subgraphs/name/devnet')
        .set('x-api-key', key)
        .send({ query: `{ accounts(where: { address: "${safe7579Op.sender}" }) { address implementation } }` });
      expect(gql.body).to.deep.equal({
        data: { accounts: [{ address: safe7579Op.sender, implementation: 'Safe 1.4.1 + Safe7579 1.0.0' }] },
      });
      const filtered = await api
        .post('/subgraphs/name/devnet')
        .set('x-api-key', key)
        .send({ query: '{ accounts(where: { implementation_contains: "Safe7579" }) { address } }' });
      expect(filtered.body).to.deep.equal({ data: { accounts: [{ address: safe7579Op.sender }] } });
    } finally {
      await deps.services.close();
    }

    const canonical = (await webhookOps.listByHashes(t.db, 31337, [safe7579Op.userOpHash])).get(safe7579Op.userOpHash)!;
    const body = JSON.parse(
      userOperationBody(
        { deliveryId: 'd', webhookId: 'w', chainId: 31337, network: 'devnet' },
        {
          outboxId: 1,
          chainId: 31337,
          recordedAt: new Date(),
          type: 'user_operation',
          userOpHash: safe7579Op.userOpHash,
          sender: safe7579Op.sender,
          paymaster: null,
          bundler: canonical.userOp.bundler,
          targets: [],
          transferParties: [],
          blockNumber: Number(canonical.userOp.blockNumber),
          blockHash: canonical.blockHash,
          transactionHash: canonical.userOp.transactionHash,
          bundleIndex: canonical.userOp.bundleIndex,
          logIndex: canonical.userOp.logIndex,
        },
        canonical,
      ),
    ) as { data: { userOp: { implementation: string } } };
    expect(body.data.userOp.implementation).to.equal('Safe 1.4.1 + Safe7579 1.0.0');
  });
});
