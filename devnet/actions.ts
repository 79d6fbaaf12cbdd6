/**
 * What a user operation does once executed: the calls its callData carries, the token and ETH
 * transfers those calls should produce when the op succeeds, and, for ops meant to fail, the
 * exact revert data the EntryPoint should report.
 */
import { AbiCoder, Interface, id } from 'ethers';
import { batchCanSendValue, type AccountCall, type AccountFamily } from './calls.js';
import type { Deployment } from './deploy.js';
import type { Random } from './random.js';
import { ZERO_ADDRESS } from '../shared/chain/constants.js';

export type TransferIntent = {
  standard: 'ERC20' | 'ERC721' | 'ERC1155' | 'NATIVE';
  token: string | null;
  from: string;
  to: string;
  value: bigint;
  tokenId: bigint | null;
};

export type PlannedCall = AccountCall & { transfers: TransferIntent[] };

export type ActionKind = 'native' | 'erc20' | 'erc721' | 'erc1155' | 'mixedBatch' | 'revertReason' | 'revertEmpty' | 'revertInBatch';

export type Action = {
  kind: ActionKind;
  /** true → executeBatch (even for one call), false → execute. */
  batch: boolean;
  calls: PlannedCall[];
  /** undefined: must succeed; '0x': reverts with empty data (no RevertReason event); else the RevertReason bytes. */
  expectedRevert?: string;
};

/** Relative frequency of each kind. */
export const ACTION_WEIGHTS: Record<ActionKind, number> = {
  native: 14,
  erc20: 16,
  erc721: 10,
  erc1155: 10,
  mixedBatch: 16,
  revertReason: 7,
  revertEmpty: 4,
  revertInBatch: 4,
};

const erc20 = new Interface(['function transfer(address,uint256)', 'function mint(address,uint256)']);
const erc721 = new Interface(['function mint(address,uint256)', 'function transferFrom(address,address,uint256)']);
const erc1155 = new Interface([
  'function mint(address,uint256,uint256)',
  'function safeTransferFrom(address,address,uint256,uint256,bytes)',
]);
const reverter = new Interface(['function fail(string)', 'function failEmpty()']);
const abi = AbiCoder.defaultAbiCoder();

/** `Error(string)`, as `revert(reason)` encodes it. */
export function errorStringData(reason: string): string {
  return id('Error(string)').slice(0, 10) + abi.encode(['string'], [reason]).slice(2);
}

/** v0.8 BaseAccount wraps a failing call of a multi-call batch as `ExecuteError(index, data)`. */
export function executeErrorData(index: number, inner: string): string {
  return id('ExecuteError(uint256,bytes)').slice(0, 10) + abi.encode(['uint256', 'bytes'], [index, inner]).slice(2);
}

export type ActionContext = {
  rng: Random;
  family: AccountFamily;
  account: string;
  deployment: Deployment;
  recipients: string[];
  /** A fresh ERC-721 token id (never minted before on this devnet). */
  nextNftId(): bigint;
};

export function buildAction(kind: ActionKind, ctx: ActionContext): Action {
  const { rng, account, deployment: d } = ctx;
  const to = (): string => rng.pick(ctx.recipients);
  const erc20Transfer = (): PlannedCall => {
    const [token, decimals] = rng.chance(0.5) ? [d.erc20Usd6, 6n] : [d.erc20Dai18, 18n];
    const value = BigInt(rng.int(1, 1000)) * 10n ** (decimals - 2n);
    const dest = to();
    return {
      target: token,
      value: 0n,
      data: erc20.encodeFunctionData('transfer', [dest, value]),
      transfers: [{ standard: 'ERC20', token, from: account, to: dest, value, tokenId: null }],
    };
  };
  const native = (): PlannedCall => {
    const dest = to();
    const value = BigInt(rng.int(1, 100)) * 10n ** 14n;
    return {
      target: dest,
      value,
      data: '0x',
      transfers: [{ standard: 'NATIVE', token: null, from: account, to: dest, value, tokenId: null }],
    };
  };
  const mint1155 = (recipient: string, tokenId: bigint, value: bigint): PlannedCall => ({
    target: d.erc1155,
    value: 0n,
    data: erc1155.encodeFunctionData('mint', [recipient, tokenId, value]),
    transfers: [{ standard: 'ERC1155', token: d.erc1155, from: ZERO_ADDRESS, to: recipient, value, tokenId }],
  });
  const mint721 = (recipient: string, tokenId: bigint): PlannedCall => ({
    target: d.erc721,
    value: 0n,
    data: erc721.encodeFunctionData('mint', [recipient, tokenId]),
    transfers: [{ standard: 'ERC721', token: d.erc721, from: ZERO_ADDRESS, to: recipient, value: 1n, tokenId }],
  });
  const reason = `devnet: ${kind} on purpose #${rng.int(1, 1_000_000)}`;
  const fail: PlannedCall = { target: d.reverter, value: 0n, data: reverter.encodeFunctionData('fail', [reason]), transfers: [] };

  switch (kind) {
    case 'native':
      return { kind, batch: false, calls: [native()] };
    case 'erc20':
      return { kind, batch: false, calls: [erc20Transfer()] };
    case 'erc721': {
      // Mint to self, then send it on: one Transfer from zero, one from the account.
      const tokenId = ctx.nextNftId();
      const dest = to();
      const send: PlannedCall = {
        target: d.erc721,
        value: 0n,
        data: erc721.encodeFunctionData('transferFrom', [account, dest, tokenId]),
        transfers: [{ standard: 'ERC721', token: d.erc721, from: account, to: dest, value: 1n, tokenId }],
      };
      return { kind, batch: true, calls: [mint721(account, tokenId), send] };
    }
    case 'erc1155': {
      const tokenId = BigInt(rng.int(1, 20));
      const minted = BigInt(rng.int(2, 100));
      const sent = BigInt(rng.int(1, Number(minted)));
      const dest = to();
      const send: PlannedCall = {
        target: d.erc1155,
        value: 0n,
        data: erc1155.encodeFunctionData('safeTransferFrom', [account, dest, tokenId, sent, '0x']),
        transfers: [{ standard: 'ERC1155', token: d.erc1155, from: account, to: dest, value: sent, tokenId }],
      };
      return { kind, batch: true, calls: [mint1155(account, tokenId, minted), send] };
    }
    case 'mixedBatch': {
      const makers: Array<() => PlannedCall> = [
        erc20Transfer,
        () => mint1155(to(), BigInt(rng.int(1, 20)), BigInt(rng.int(1, 50))),
        () => mint721(to(), ctx.nextNftId()),
      ];
      if (batchCanSendValue(ctx.family)) makers.push(native);
      const calls = Array.from({ length: rng.int(1, 4) }, () => rng.pick(makers)());
      return { kind, batch: true, calls };
    }
    case 'revertReason':
      return { kind, batch: false, calls: [fail], expectedRevert: errorStringData(reason) };
    case 'revertEmpty':
      return {
        kind,
        batch: false,
        calls: [{ target: d.reverter, value: 0n, data: reverter.encodeFunctionData('failEmpty'), transfers: [] }],
        expectedRevert: '0x',
      };
    case 'revertInBatch': {
      // The transfer before the failing call is rolled back with it: no transfers recorded.
      const inner = errorStringData(reason);
      return {
        kind,
        batch: true,
        calls: [erc20Transfer(), fail],
        expectedRevert: ctx.family === 'simple-v0.8' ? executeErrorData(1, inner) : inner,
      };
    }
  }
}
