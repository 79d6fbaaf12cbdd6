/**
 * An EIP-7702 EOA's whole life beside the op traffic (whose 7702 accounts each authorize once, in
 * their first op's bundle): it delegates to Simple7702Account v0.9 by its own type-4 transaction,
 * is re-delegated to MetaMask's EIP-7702 Stateless DeleGator by the operator's (in the same list,
 * an authorization for another chain and one at its spent nonce, which do not take effect), and
 * clears its delegation by its own transaction again. Each authorization is recorded with what the
 * chain does with it.
 */
import { createWalletClient, http, parseEther, zeroAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetChain } from './contracts.js';
import type { RealisticDevnet } from './index.js';

/** One authorization the lifecycle sent. */
export type DelegationRecord = {
  authority: Address;
  /** null: the authorization clears the delegation. */
  delegate: Address | null;
  chainId: number;
  nonce: number;
  transactionHash: Hex;
  /** own: the EOA's own type-4 transaction; sponsored: the operator's. */
  sentBy: 'own' | 'sponsored';
  expected: 'effective' | 'wrong_chain_id' | 'wrong_nonce';
};

/** The owner-key index of the lifecycle's EOA (far past the op traffic's accounts). */
const LIFECYCLE_OWNER = 1_000_000;

export async function sendDelegationLifecycle(rd: RealisticDevnet): Promise<DelegationRecord[]> {
  const chain = devnetChain(rd.devnet);
  const eoa = privateKeyToAccount(rd.ownerKey(LIFECYCLE_OWNER));
  const own = createWalletClient({ chain, transport: http(rd.devnet.rpcUrl), account: eoa });
  const mined = async (hash: Hex): Promise<Hex> => {
    const receipt = await rd.operator.public.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`delegation transaction ${hash} reverted`);
    return hash;
  };
  const chainId = rd.devnet.chainId;
  const records: DelegationRecord[] = [];
  const record = (
    transactionHash: Hex,
    sentBy: DelegationRecord['sentBy'],
    list: Array<Omit<DelegationRecord, 'authority' | 'transactionHash' | 'sentBy'>>,
  ) => records.push(...list.map((r) => ({ ...r, authority: eoa.address, transactionHash, sentBy })));

  await rd.operator.sendAndWait({ to: eoa.address, value: parseEther('0.1') });
  const start = await rd.operator.public.getTransactionCount({ address: eoa.address });
  // Its own transaction takes nonce `start`; its authorization, applied after, the next one.
  const first = { delegate: rd.contracts.simple7702['v0.9'], chainId, nonce: start + 1, expected: 'effective' as const };
  const delegated = await mined(
    await own.sendTransaction({
      to: zeroAddress,
      nonce: start,
      authorizationList: [await eoa.signAuthorization({ address: first.delegate, chainId, nonce: first.nonce })],
    }),
  );
  record(delegated, 'own', [first]);

  const redelegate = [
    { delegate: rd.delegationFramework.stateless7702DeleGator, chainId, nonce: start + 2, expected: 'effective' as const },
    { delegate: rd.contracts.simple7702['v0.8'], chainId: chainId + 1, nonce: start + 3, expected: 'wrong_chain_id' as const },
    { delegate: rd.contracts.simple7702['v0.8'], chainId, nonce: start + 1, expected: 'wrong_nonce' as const },
  ];
  const sponsored = await rd.operator.sendAndWait({
    to: rd.operator.account.address,
    authorizationList: await Promise.all(
      redelegate.map((r) => eoa.signAuthorization({ address: r.delegate, chainId: r.chainId, nonce: r.nonce })),
    ),
  });
  record(sponsored.transactionHash, 'sponsored', redelegate);

  const clear = { delegate: null, chainId, nonce: start + 4, expected: 'effective' as const };
  const cleared = await mined(
    await own.sendTransaction({
      to: zeroAddress,
      nonce: start + 3,
      authorizationList: [await eoa.signAuthorization({ address: zeroAddress, chainId, nonce: clear.nonce })],
    }),
  );
  record(cleared, 'own', [clear]);
  return records;
}
