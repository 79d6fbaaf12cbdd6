/**
 * EIP-7702 delegations indexed from a real anvil chain (Prague) with the real EntryPoint v0.8,
 * Simple7702Account v0.8 and MetaMask's EIP-7702 Stateless DeleGator: EOAs that delegate by their
 * own type-4 transaction and through a bundle, re-delegate (by a sponsor's transaction, and by a
 * later op whose bundle carries the authorization, in a block then reorged away), clear their
 * delegation, and authorizations that do not take effect (another chain's id, a spent nonce, a bad
 * signature), some in one block, one in a bundle transaction that reverts. Each mode is checked against the chain
 * itself: the authorities recovered with viem from every block's transactions, and what each
 * authorization did read from the authority's code and nonce at each block.
 */
import { expect } from 'chai';
import request from 'supertest';
import {
  createPublicClient,
  createWalletClient,
  defineChain,
  encodeFunctionData,
  http,
  parseEther,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
  type SignedAuthorization,
  type TransactionReceipt,
} from 'viem';
import { generatePrivateKey, mnemonicToAccount, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { entryPoint08Abi, toPackedUserOperation, toSimple7702SmartAccount, type UserOperation } from 'viem/account-abstraction';
import { ANVIL_MNEMONIC, startChain, type Chain } from '../../devnet/chain.js';
import { deployDelegationFramework } from '../../devnet/realistic/delegationFramework.js';
import { deployVendorContracts } from '../../devnet/realistic/vendorContracts.js';
import { startIndexer } from '../../indexer/index.js';
import type { Db } from '../../shared/db/client.js';
import { CANONICAL_ENTRYPOINTS } from '../../shared/chain/constants.js';
import { createApp } from '../../server/app.js';
import { createTestKey, testDeps } from '../helpers/app.js';
import { useTestDb } from '../helpers/db.js';
import { devnetConfig, indexedBlock, quietLogger } from './support.js';
import {
  authorizationsOnChain,
  checkDelegationsAgainstChain,
  delegateAt,
  delegationAnswers,
  type ChainAuthorization,
  type DelegationsAnswer,
} from './support/delegationsOnChain.js';

const EP08 = CANONICAL_ENTRYPOINTS['v0.8'] as Address;
/** Simple7702Account v0.8 at its mainnet address (the vendors' recipe deploys it). */
const SIMPLE7702_V08 = '0xe6cae83bde06e4c305530e199d7217f42808555b';
const CHAIN_ID = 31337;
/** secp256k1's group order. */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

/** The same signature with s mirrored into the curve's upper half (and yParity flipped): it recovers, yet is not canonical. */
const highS = (a: SignedAuthorization): SignedAuthorization => ({
  ...a,
  s: toHex(CURVE_ORDER - BigInt(a.s), { size: 32 }),
  yParity: a.yParity === 1 ? 0 : 1,
  v: undefined,
});

describe('EIP-7702 delegations against the chain', function () {
  this.timeout(300_000);
  const all = useTestDb();
  const ops = useTestDb();
  let chain: Chain;
  let delegator: Address;
  const authorities = new Map<string, string>();
  let chainAuthorizations: ChainAuthorization[] = [];
  let bobAccount: PrivateKeyAccount | undefined;
  /** bob's next op on EntryPoint v0.8 in a bundle transaction carrying `authorization` (its receipt). */
  let sendBobOp: ((authorization: SignedAuthorization) => Promise<TransactionReceipt>) | undefined;
  let graceAddress = '';

  before(async function () {
    chain = await startChain();
    const viemChain = defineChain({
      id: CHAIN_ID,
      name: 'anvil',
      nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
      rpcUrls: { default: { http: [chain.rpcUrl] } },
    });
    const client = createPublicClient({ chain: viemChain, transport: http(chain.rpcUrl) });
    const sponsor = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 1 });
    const bundler = mnemonicToAccount(ANVIL_MNEMONIC, { addressIndex: 2 });
    const walletOf = (account: PrivateKeyAccount | typeof sponsor) =>
      createWalletClient({ chain: viemChain, transport: http(chain.rpcUrl), account });
    const mined = async (hash: Hex) => client.waitForTransactionReceipt({ hash });
    await deployVendorContracts(chain.rpc);
    delegator = (await deployDelegationFramework(chain.rpc)).stateless7702DeleGator;

    const eoa = (name: string): PrivateKeyAccount => {
      const account = privateKeyToAccount(generatePrivateKey());
      authorities.set(name, account.address.toLowerCase());
      return account;
    };
    const [alice, bob, carol, dave, erin, frank] = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'].map(eoa);
    // grace's signature is valid but for its s in the curve's upper half, which EIP-7702 refuses.
    const grace = privateKeyToAccount(generatePrivateKey());
    graceAddress = grace.address.toLowerCase();
    bobAccount = bob;
    for (const who of [alice!, bob!, erin!])
      await mined(await walletOf(sponsor).sendTransaction({ to: who.address, value: parseEther('1') }));
    const sign = (who: PrivateKeyAccount, address: Address, nonce: number, chainId = CHAIN_ID) =>
      who.signAuthorization({ address, nonce, chainId });
    const sponsored = async (authorizationList: SignedAuthorization[]) =>
      mined(await walletOf(sponsor).sendTransaction({ to: sponsor.address, authorizationList }));

    // alice delegates by her own transaction (her authorization one past the transaction's nonce),
    // and in the same block a sponsor re-delegates her to the DeleGator at her next nonce.
    await chain.rpc.call('evm_setAutomine', [false]);
    const own = await walletOf(alice!).sendTransaction({
      to: alice!.address,
      authorizationList: [await sign(alice!, SIMPLE7702_V08, 1)],
      nonce: 0,
    });
    const redelegate = await walletOf(sponsor).sendTransaction({
      to: sponsor.address,
      authorizationList: [await sign(alice!, delegator, 2)],
    });
    await chain.rpc.call('evm_mine', []);
    await chain.rpc.call('evm_setAutomine', [true]);
    await mined(own);
    await mined(redelegate);

    // frank in one list: delegates, re-delegates, then a spent nonce (no effect); carol for another
    // chain; dave with a nonce he has not reached.
    await sponsored([
      await sign(frank!, SIMPLE7702_V08, 0),
      await sign(frank!, delegator, 1),
      await sign(frank!, zeroAddress, 0),
      await sign(carol!, SIMPLE7702_V08, 0, 10),
      await sign(dave!, SIMPLE7702_V08, 5),
      highS(await sign(grace, SIMPLE7702_V08, 0)),
    ]);

    // bob's first op, through the bundle: EntryPoint v0.8 sees the 7702 initCode marker and runs
    // the code bob's authorization (in the same transaction) set.
    const bobAuthorization = await sign(bob!, SIMPLE7702_V08, 0);
    const account = await toSimple7702SmartAccount({
      client,
      owner: bob!,
      implementation: SIMPLE7702_V08,
      entryPoint: { abi: entryPoint08Abi, address: EP08, version: '0.8' },
    });
    const unsigned = {
      sender: bob!.address,
      nonce: 0n,
      factory: '0x7702' as Address,
      factoryData: '0x' as Hex,
      callData: await account.encodeCalls([{ to: sponsor.address, value: 1n, data: '0x' }]),
      callGasLimit: 200_000n,
      verificationGasLimit: 500_000n,
      preVerificationGas: 100_000n,
      maxFeePerGas: 5_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
      signature: '0x' as Hex,
      authorization: bobAuthorization,
    };
    const bundle = async (op: UserOperation<'0.8'>) =>
      mined(
        await walletOf(bundler).sendTransaction({
          to: EP08,
          data: encodeFunctionData({
            abi: entryPoint08Abi,
            functionName: 'handleOps',
            args: [[toPackedUserOperation(op)], bundler.address],
          }),
          authorizationList: [op.authorization!],
          gas: 3_000_000n,
        }),
      );
    const signed = async (op: UserOperation<'0.8'>) => ({
      ...op,
      signature: await account.signUserOperation({ ...op, chainId: CHAIN_ID }),
    });
    const first = await bundle(await signed(unsigned));
    if (first.status !== 'success' || first.logs.length === 0) throw new Error("bob's bundle did not land");
    // A later op of bob's, once delegated: no initCode, the EntryPoint's next nonce.
    sendBobOp = async (authorization) => {
      const nonce = await client.readContract({ address: EP08, abi: entryPoint08Abi, functionName: 'getNonce', args: [bob!.address, 0n] });
      const receipt = await bundle(await signed({ ...unsigned, factory: undefined, factoryData: undefined, nonce, authorization }));
      if (receipt.status !== 'success' || receipt.logs.length === 0) throw new Error("bob's later bundle did not land");
      return receipt;
    };

    // erin's authorization rides a bundle that reverts (her op's signature is garbage): it takes
    // effect anyway, and no EntryPoint log shows it.
    const erinAuthorization = await sign(erin!, SIMPLE7702_V08, 0);
    const bad = { ...unsigned, sender: erin!.address, authorization: erinAuthorization, signature: toHex(new Uint8Array(65).fill(0x11)) };
    if ((await bundle(bad)).status !== 'reverted') throw new Error("erin's bundle did not revert");

    // alice clears her delegation; bob re-delegates to the DeleGator by a sponsor's transaction.
    await sponsored([await sign(alice!, zeroAddress, 3), await sign(bob!, delegator, 1)]);

    chainAuthorizations = await authorizationsOnChain(chain.rpc, [EP08]);
  });

  after(async () => {
    await chain?.stop();
  });

  const rpc = <T>(method: string, params: unknown[]) => chain.rpc.call<T>(method, params);
  const codeAt = (address: string, block: number | 'latest') => delegateAt(chain.rpc, address, block);
  const nonceAt = async (address: string, block: number) =>
    BigInt(await rpc<string>('eth_getTransactionCount', [address, `0x${block.toString(16)}`]));

  /** `all` is set for the network alone (INDEXER_DELEGATIONS_DEVNET), over the process's ops. */
  const modeSettings = (mode: 'ops' | 'all'): Record<string, string> =>
    mode === 'ops' ? { INDEXER_DELEGATIONS: 'ops' } : { INDEXER_DELEGATIONS_DEVNET: 'all' };

  async function index(db: Db, mode: 'ops' | 'all'): Promise<void> {
    const indexer = startIndexer({ db, config: devnetConfig(chain.rpcUrl, modeSettings(mode)), log: quietLogger() });
    try {
      await indexer.syncNow();
    } finally {
      await indexer.stop();
    }
    expect(await indexedBlock(db, CHAIN_ID), 'indexed up to the head').to.equal(Number(await rpc<string>('eth_blockNumber', [])));
  }

  const answers = (db: Db) => delegationAnswers(db, authorities.values());
  const checkAgainstChain = (answer: Map<string, DelegationsAnswer>, seen: (a: ChainAuthorization) => boolean) =>
    checkDelegationsAgainstChain({ rpc: chain.rpc, chainId: CHAIN_ID, authorizations: chainAuthorizations }, authorities, answer, seen);

  it('all: every authorization of the chain, each marked as the chain applied it, and each current delegate', async () => {
    await index(all.db, 'all');
    const answer = await answers(all.db);
    await checkAgainstChain(answer, () => true);
    const statuses = (name: string) => answer.get(authorities.get(name)!)!.history.map((h) => h.status);
    // What the scenario made, so that the comparison above covers each case.
    expect(statuses('frank')).to.deep.equal(['wrong_nonce', 'effective', 'effective']);
    expect(statuses('carol')).to.deep.equal(['wrong_chain_id']);
    expect(statuses('dave')).to.deep.equal(['wrong_nonce']);
    // grace's upper-half s: kept without an authority, and the chain left her without code.
    const frankList = answer.get(authorities.get('frank')!)!.history[0]!.transactionHash as string;
    const { rows } = await all.db.query<{ authority: string | null; status: string }>(
      `select authority, status from delegations where tx_hash = $1 and auth_index = 5`,
      [`\\x${frankList.slice(2)}`],
    );
    expect(rows).to.deep.equal([{ authority: null, status: 'invalid_signature' }]);
    expect(await codeAt(graceAddress, 'latest')).to.equal(null);
    expect(statuses('alice')).to.deep.equal(['effective', 'effective', 'effective']);
    expect(answer.get(authorities.get('alice')!)!.current).to.equal(null);
    expect(answer.get(authorities.get('bob')!)!.current).to.equal(delegator.toLowerCase());
    expect(answer.get(authorities.get('erin')!)!.history.map((h) => [h.status, h.viaUserOp])).to.deep.equal([['effective', true]]);
  });

  it('ops: the authorizations of the bundle transactions with an op, marked as the chain applied them', async () => {
    await index(ops.db, 'ops');
    const answer = await answers(ops.db);
    await checkAgainstChain(answer, (a) => a.entryPointLogs);
    expect(answer.get(authorities.get('bob')!)!.history.map((h) => h.status)).to.deep.equal(['effective']);
    expect(answer.get(authorities.get('erin')!)!.history).to.deep.equal([]);
  });

  it("answers the delegate on accountDetail and GraphQL's Account and Delegation", async () => {
    const deps = testDeps(all.db, { RATE_LIMIT_PER_SECOND: '1000000' });
    try {
      const key = await createTestKey(all.db, 'graphql', 1_000_000);
      const api = request(createApp(deps));
      const bob = authorities.get('bob')!;
      const detail = await api.get('/v0/getAddressActivity').query({ network: 'devnet', address: bob }).set('x-api-key', key);
      expect(detail.body.accountDetail.delegation).to.equal(delegator.toLowerCase());
      const gql = await api
        .post('/subgraphs/name/devnet')
        .set('x-api-key', key)
        .send({
          query: `{ accounts(where: { address: "${bob}" }) { delegation delegations(orderBy: blockNumber) { delegate status viaUserOp } } }`,
        });
      expect(gql.body, JSON.stringify(gql.body)).to.deep.equal({
        data: {
          accounts: [
            {
              delegation: delegator.toLowerCase(),
              delegations: [
                { delegate: SIMPLE7702_V08, status: 'effective', viaUserOp: true },
                { delegate: delegator.toLowerCase(), status: 'effective', viaUserOp: false },
              ],
            },
          ],
        },
      });
      const frank = authorities.get('frank')!;
      const list = await api
        .post('/subgraphs/name/devnet')
        .set('x-api-key', key)
        .send({ query: `{ delegations(where: { authority: "${frank}", status: "wrong_nonce" }) { authorizationNonce delegate } }` });
      expect(list.body).to.deep.equal({ data: { delegations: [{ authorizationNonce: '0', delegate: null }] } });
    } finally {
      await deps.services.close();
    }
  });

  it('refuses a bad address or page with an error naming the parameter', async () => {
    const deps = testDeps(all.db, { RATE_LIMIT_PER_SECOND: '1000000' });
    try {
      const key = await createTestKey(all.db, 'inputs', 1_000_000);
      const api = request(createApp(deps));
      for (const [query, parameter] of [
        [{ network: 'devnet', address: '0x1234' }, 'address'],
        [{ network: 'devnet' }, 'address'],
        [{ network: 'devnet', address: authorities.get('bob')!, first: '0' }, 'first'],
        [{ network: 'devnet', address: authorities.get('bob')!, skip: '-1' }, 'skip'],
        [{ network: 'atlantis', address: authorities.get('bob')! }, 'network'],
      ] as const) {
        const res = await api.get('/v0/getAccountDelegations').query(query).set('x-api-key', key);
        expect(res.status, JSON.stringify(query)).to.equal(400);
        expect(JSON.stringify(res.body), JSON.stringify(query)).to.include(parameter);
      }
    } finally {
      await deps.services.close();
    }
  });

  it("a reorg of the block holding an op's re-delegation unwinds it: history and current delegate go back to the new chain", async () => {
    const bob = authorities.get('bob')!;
    const before = await answers(all.db);
    expect(before.get(bob)!.current).to.equal(delegator.toLowerCase());
    const snapshot = await rpc<string>('evm_snapshot', []);
    // bob's op carries his authorization back to Simple7702Account v0.8, which then validates it.
    const nonce = Number(await nonceAt(bob, Number(await rpc<string>('eth_blockNumber', []))));
    const redelegated = await sendBobOp!(await bobAccount!.signAuthorization({ address: SIMPLE7702_V08, nonce, chainId: CHAIN_ID }));
    const indexer = startIndexer({ db: all.db, config: devnetConfig(chain.rpcUrl, modeSettings('all')), log: quietLogger() });
    try {
      await indexer.syncNow();
      const answer = (await answers(all.db)).get(bob)!;
      expect(answer.current)
        .to.equal(SIMPLE7702_V08)
        .and.to.equal(await codeAt(bob, 'latest'));
      expect(answer.history[0]).to.include({
        transactionHash: redelegated.transactionHash,
        delegate: SIMPLE7702_V08,
        status: 'effective',
        viaUserOp: true,
      });
      // The fork without it, one block longer.
      await rpc('evm_revert', [snapshot]);
      for (let i = 0; i < 2; i++) await rpc('evm_mine', []);
      await indexer.syncNow();
    } finally {
      await indexer.stop();
    }
    const after = (await answers(all.db)).get(bob)!;
    expect(after).to.deep.equal(before.get(bob));
    expect(after.current).to.equal(await codeAt(bob, 'latest'));
    const { rows } = await all.db.query<{ reorg_epoch: number }>('select reorg_epoch from indexer_state where chain_id = $1', [CHAIN_ID]);
    expect(rows[0]!.reorg_epoch).to.equal(1);
  });
});
