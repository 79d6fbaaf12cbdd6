/**
 * EIP-7702 delegations as the chain itself shows them, and the check of opscan's answers against
 * it: every authorization of every block with its authority recovered by viem (not the indexer's
 * ethers), and what each did read from the authority's nonce and code at its block.
 */
import { expect } from 'chai';
import request from 'supertest';
import { hexToNumber, zeroAddress, type Address, type Hex } from 'viem';
import { recoverAuthorizationAddress } from 'viem/utils';
import type { Rpc } from '../../../devnet/rpc.js';
import type { Db } from '../../../shared/db/client.js';
import { createApp } from '../../../server/app.js';
import { createTestKey, testDeps } from '../../helpers/app.js';

/** One authorization as the chain shows it. */
export type ChainAuthorization = {
  txHash: string;
  blockNumber: number;
  authIndex: number;
  authority: string | null;
  delegate: string | null;
  chainId: number;
  nonce: number;
  /** Its transaction calls an EntryPoint (a bundle, whether it reverted or not). */
  viaBundle: boolean;
  /** Its transaction holds EntryPoint logs (what INDEXER_DELEGATIONS=ops reads). */
  entryPointLogs: boolean;
};

/** getAccountDelegations' answer. */
export type DelegationsAnswer = { current: string | null; history: Array<Record<string, unknown>> };

type RawTx = {
  hash: string;
  to: string | null;
  from: string;
  authorizationList?: Array<{ chainId: Hex; address: Address; nonce: Hex; yParity: Hex; r: Hex; s: Hex }>;
};

const hex = (n: number): string => `0x${n.toString(16)}`;

/** Every authorization of blocks 0 to the head, read with eth_getBlockByNumber (no client cache between). */
export async function authorizationsOnChain(rpc: Rpc, entryPoints: string[]): Promise<ChainAuthorization[]> {
  const eps = new Set(entryPoints.map((e) => e.toLowerCase()));
  const out: ChainAuthorization[] = [];
  const head = hexToNumber(await rpc.call<Hex>('eth_blockNumber', []));
  for (let n = 0; n <= head; n++) {
    const block = await rpc.call<{ transactions: RawTx[] }>('eth_getBlockByNumber', [hex(n), true]);
    for (const tx of block.transactions) {
      if (!tx.authorizationList?.length) continue;
      const receipt = await rpc.call<{ logs: Array<{ address: string }> }>('eth_getTransactionReceipt', [tx.hash]);
      const entryPointLogs = receipt.logs.some((l) => eps.has(l.address.toLowerCase()));
      const viaBundle = !!tx.to && eps.has(tx.to.toLowerCase());
      for (const [authIndex, a] of tx.authorizationList.entries()) {
        const authorization = {
          address: a.address,
          chainId: hexToNumber(a.chainId),
          nonce: hexToNumber(a.nonce),
          yParity: hexToNumber(a.yParity),
          r: a.r,
          s: a.s,
        };
        const authority = await recoverAuthorizationAddress({ authorization }).catch(() => null);
        out.push({
          txHash: tx.hash.toLowerCase(),
          blockNumber: n,
          authIndex,
          authority: authority?.toLowerCase() ?? null,
          delegate: a.address.toLowerCase() === zeroAddress ? null : a.address.toLowerCase(),
          chainId: authorization.chainId,
          nonce: authorization.nonce,
          viaBundle,
          entryPointLogs,
        });
      }
    }
  }
  return out;
}

/** The delegate `address`'s code designates at `block` (null: no code). */
export async function delegateAt(rpc: Rpc, address: string, block: number | 'latest'): Promise<string | null> {
  const code = (await rpc.call<string>('eth_getCode', [address, typeof block === 'number' ? hex(block) : block])).toLowerCase();
  if (code === '0x') return null;
  expect(code.slice(0, 8), `${address}'s code is a delegation designator`).to.equal('0xef0100');
  return `0x${code.slice(8)}`;
}

const nonceAt = async (rpc: Rpc, address: string, block: number) =>
  BigInt(await rpc.call<string>('eth_getTransactionCount', [address, hex(block)]));

async function sentIn(rpc: Rpc, address: string, block: number): Promise<number> {
  const b = await rpc.call<{ transactions: Array<{ from: string }> }>('eth_getBlockByNumber', [hex(block), true]);
  return b.transactions.filter((t) => t.from.toLowerCase() === address).length;
}

/** getAccountDelegations of each address, through the real app over `db`. */
export async function delegationAnswers(db: Db, addresses: Iterable<string>): Promise<Map<string, DelegationsAnswer>> {
  const deps = testDeps(db, { RATE_LIMIT_PER_SECOND: '1000000' });
  try {
    const key = await createTestKey(db, 'delegations', 1_000_000);
    const api = request(createApp(deps));
    const out = new Map<string, DelegationsAnswer>();
    for (const address of addresses) {
      const res = await api.get('/v0/getAccountDelegations').query({ network: 'devnet', address, first: 100 }).set('x-api-key', key);
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      out.set(address, res.body as DelegationsAnswer);
    }
    return out;
  } finally {
    await deps.services.close();
  }
}

/**
 * Checks each authority's answer against what the chain did with the authorizations `seen` (those
 * the mode reads): its history is exactly them, newest first; in each block where every one of its
 * authorizations is seen, its nonce moved by the effective ones plus its own transactions, and its
 * code is the designator of the last effective one (unchanged when none); one that did not take
 * effect names the reason its chain id gives; `current` is its code at the head when every one of
 * its authorizations is seen.
 */
export async function checkDelegationsAgainstChain(
  chain: { rpc: Rpc; chainId: number; authorizations: ChainAuthorization[] },
  authorities: Map<string, string>,
  answer: Map<string, DelegationsAnswer>,
  seen: (a: ChainAuthorization) => boolean,
): Promise<void> {
  const { rpc, chainId, authorizations: chainAuthorizations } = chain;
  for (const [name, authority] of authorities) {
    const everyOne = chainAuthorizations.filter((a) => a.authority === authority);
    const mine = everyOne.filter(seen);
    const history = answer.get(authority)!.history;
    expect(
      history.map((h) => [h.transactionHash, h.delegate, h.authorizationNonce, h.viaUserOp]),
      `${name}'s history`,
    ).to.deep.equal([...mine].reverse().map((a) => [a.txHash, a.delegate, String(a.nonce), a.viaBundle]));
    // Aligned with the chain's tuples (the history equals them in order): one that did not take effect names the reason its chain id gives.
    const newestFirst = [...mine].reverse();
    history.forEach((h, i) => {
      if (h.status === 'effective') return;
      const named = newestFirst[i]!.chainId;
      expect(h.status, `${name}'s ${String(h.transactionHash)}`).to.equal(
        named === 0 || named === chainId ? 'wrong_nonce' : 'wrong_chain_id',
      );
    });
    for (const block of new Set(mine.map((a) => a.blockNumber))) {
      const stored = history.filter((h) => Number(h.blockNumber) === block);
      if (mine.filter((a) => a.blockNumber === block).length !== everyOne.filter((a) => a.blockNumber === block).length) continue;
      const effective = stored.filter((h) => h.status === 'effective');
      const moved =
        (await nonceAt(rpc, authority, block)) - (await nonceAt(rpc, authority, block - 1)) - BigInt(await sentIn(rpc, authority, block));
      expect(BigInt(effective.length), `${name}'s effective authorizations in block ${block}`).to.equal(moved);
      const code = await delegateAt(rpc, authority, block);
      if (effective.length > 0) expect(code, `${name}'s code after block ${block}`).to.equal(effective[0]!.delegate);
      else expect(code, `${name}'s code unchanged in block ${block}`).to.equal(await delegateAt(rpc, authority, block - 1));
    }
    if (mine.length === everyOne.length)
      expect(answer.get(authority)!.current, `${name}'s current delegate`).to.equal(await delegateAt(rpc, authority, 'latest'));
  }
}
