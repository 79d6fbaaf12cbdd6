/**
 * EIP-7702 EOAs' whole lives beside the op traffic (whose 7702 accounts each authorize once, in
 * their first op's bundle). One delegates to Simple7702Account v0.9 by its own type-4 transaction,
 * is re-delegated to MetaMask's EIP-7702 Stateless DeleGator by the operator's (in the same list,
 * an authorization for another chain and one at its spent nonce, which do not take effect), and
 * clears its delegation by its own transaction again. Another is delegated and re-delegated by its
 * own ops only, as a wallet switching implementations does: each op carries an authorization to
 * the next implementation (Simple7702Account v0.8, then v0.9, then the Stateless DeleGator), which
 * the bundler puts in the bundle transaction's authorization list, so the op is validated by the
 * code it delegates to. Each authorization is recorded with what the chain does with it.
 *
 * An op carrying an authorization that would not take effect never reaches the chain through Alto:
 * it refuses one at a spent nonce or for another chain when the op is estimated or sent (and drops
 * one whose nonce moved before its bundle). The lifecycle asks, and stops if Alto takes one.
 */
import { createWalletClient, http, parseEther, zeroAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { createRealAccount, type AccountType } from './accounts.js';
import { devnetChain } from './contracts.js';
import type { RealisticDevnet } from './index.js';
import { sendOneOp } from './traffic.js';

/** One authorization the lifecycle sent. */
export type DelegationRecord = {
  authority: Address;
  /** null: the authorization clears the delegation. */
  delegate: Address | null;
  chainId: number;
  nonce: number;
  transactionHash: Hex;
  /** own: the EOA's own type-4 transaction; sponsored: the operator's; userOp: an op's, in its bundle transaction. */
  sentBy: 'own' | 'sponsored' | 'userOp';
  /** The op that carried it (sentBy userOp), else null. */
  userOpHash: Hex | null;
  expected: 'effective' | 'wrong_chain_id' | 'wrong_nonce';
};

/** The owner-key index of the lifecycle's EOAs (far past the op traffic's accounts). */
const LIFECYCLE_OWNER = 1_000_000;
/** The EOA its ops re-delegate, and the account types whose implementations it delegates to in turn. */
const OP_LIFECYCLE_OWNER = LIFECYCLE_OWNER + 1;
const OP_DELEGATES: readonly AccountType[] = ['simple7702-v0.8', 'simple7702-v0.9', 'metamask-7702'];

export async function sendDelegationLifecycle(rd: RealisticDevnet): Promise<DelegationRecord[]> {
  return [...(await sendTransactionLifecycle(rd)), ...(await sendOpLifecycle(rd))];
}

/** The EOA whose delegations its own and the operator's type-4 transactions carry. */
async function sendTransactionLifecycle(rd: RealisticDevnet): Promise<DelegationRecord[]> {
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
    list: Array<Omit<DelegationRecord, 'authority' | 'transactionHash' | 'sentBy' | 'userOpHash'>>,
  ) => records.push(...list.map((r) => ({ ...r, authority: eoa.address, transactionHash, sentBy, userOpHash: null })));

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

/**
 * The EOA whose ops carry its authorizations: each op of the next account type signs one to its
 * implementation at the EOA's nonce and makes one small transfer, paid by the EOA. Between them,
 * the v0.9 account asks Alto for ops carrying an authorization at a spent nonce and one for
 * another chain.
 */
async function sendOpLifecycle(rd: RealisticDevnet): Promise<DelegationRecord[]> {
  const ownerKey = rd.ownerKey(OP_LIFECYCLE_OWNER);
  const eoa = privateKeyToAccount(ownerKey);
  const chainId = rd.devnet.chainId;
  const deps = { client: rd.operator.public, contracts: rd.contracts, delegationFramework: rd.delegationFramework };
  const transfer = { target: rd.devnet.recipients[0] as Address, value: 1n, data: '0x' as Hex };
  await rd.operator.sendAndWait({ to: eoa.address, value: parseEther('0.1') });
  const records: DelegationRecord[] = [];
  for (const type of OP_DELEGATES) {
    const account = await createRealAccount(type, deps, ownerKey, 0n);
    const delegate = account.delegate!;
    const nonce = await rd.operator.public.getTransactionCount({ address: eoa.address });
    const op = await sendOneOp(rd, account, [transfer], await eoa.signAuthorization({ address: delegate, chainId, nonce }));
    const transactionHash = op.bundlerReceipt.transactionHash as Hex;
    records.push({
      authority: eoa.address,
      delegate,
      chainId,
      nonce,
      transactionHash,
      sentBy: 'userOp',
      userOpHash: op.userOpHash,
      expected: 'effective',
    });
    if (type !== 'simple7702-v0.9') continue;
    const next = rd.delegationFramework.stateless7702DeleGator;
    const refusedFor = [
      { why: 'a spent nonce', authorization: { address: next, chainId, nonce }, refusal: 'nonce does not match' },
      { why: 'another chain', authorization: { address: next, chainId: chainId + 1, nonce: nonce + 1 }, refusal: 'chainId does not match' },
    ];
    for (const { why, authorization, refusal } of refusedFor) {
      const answer = await sendOneOp(rd, account, [transfer], await eoa.signAuthorization(authorization)).then(
        (landed) => `included it in ${landed.bundlerReceipt.transactionHash}`,
        (err: Error) => messages(err),
      );
      if (!answer.includes(refusal))
        throw new Error(`an op carrying an authorization for ${why}: Alto was expected to refuse it, it ${answer}`);
    }
  }
  return records;
}

/** An error's message and its causes' (the bundler's own words are in the SDK error's cause). */
const messages = (err: unknown): string =>
  err instanceof Error ? [err.message, ...(err.cause ? [messages(err.cause)] : [])].join(': ') : String(err);
