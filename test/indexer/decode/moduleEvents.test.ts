/**
 * Which ERC-7579 module events of a bundle transaction are an op's: its sender's, in its execution
 * slice or in its validation before its bundle's BeforeExecution (a deployment's installs), and none
 * of any other address or of an account called during another op's execution.
 */
import { expect } from 'chai';
import { AbiCoder, toBeHex } from 'ethers';
import { decodeTransaction } from '../../../indexer/decode/decodeTransaction.js';
import { TOPICS } from '../../../shared/chain/constants.js';
import { addr, ENTRY_POINTS, EP07, hash, TxBuilder, ZERO } from './builders.js';

const ctx = { chainId: 31337, entryPoints: ENTRY_POINTS, traces: 'off' as const };
const word = (v: bigint | string) => AbiCoder.defaultAbiCoder().encode([typeof v === 'bigint' ? 'uint256' : 'address'], [v]);

/**
 * A ModuleInstalled / ModuleUninstalled log of `account`: `indexed` puts both arguments in topics,
 * `extraWord` adds a third word to the data (another event of the same name).
 */
function moduleLog(
  tx: TxBuilder,
  account: string,
  [installed, typeId, module]: [installed: boolean, typeId: bigint, module: string],
  layout: 'standard' | 'indexed' | 'extraWord' = 'standard',
): TxBuilder {
  const topic0 = installed ? TOPICS.moduleInstalled : TOPICS.moduleUninstalled;
  const [typeWord, moduleWord] = [word(typeId).slice(2), word(module).slice(2)];
  tx.logs.push({
    address: account,
    topics: layout === 'indexed' ? [topic0, `0x${typeWord}`, `0x${moduleWord}`] : [topic0],
    data: layout === 'indexed' ? '0x' : `0x${typeWord}${moduleWord}${layout === 'extraWord' ? '00'.repeat(32) : ''}`,
    blockNumber: toBeHex(tx.blockNumber),
    blockHash: hash(0xb10c),
    blockTimestamp: toBeHex(1_700_000_000),
    transactionHash: tx.txHash,
    transactionIndex: '0x0',
    logIndex: toBeHex(tx.logs.length),
  });
  return tx;
}

const eventsOf = (tx: TxBuilder) =>
  decodeTransaction(tx.raw('0x'), ctx).moduleEvents.map((e) => ({
    logIndex: e.logIndex,
    account: e.account,
    userOpHash: e.userOpHash,
    installed: e.installed,
    moduleTypeId: e.moduleTypeId,
    module: e.module,
  }));

describe('decode/moduleEvents', () => {
  const [a, b, validator, executor, hook, factory] = [addr(0xa), addr(0xb), addr(0x1001), addr(0x1002), addr(0x1003), addr(0xfac)];

  it("keeps a deployment's installs (before BeforeExecution) and an execution's installs and uninstalls, each with its op", () => {
    const tx = new TxBuilder();
    tx.log(EP07, 'Deposited', [a, 1n]); // 0: a log before the account exists
    moduleLog(tx, a, [true, 1n, validator]); // 1: a's initialisation
    tx.log(EP07, 'AccountDeployed', [hash(1), a, factory, ZERO]); // 2
    tx.beforeExecution(EP07); // 3
    moduleLog(tx, a, [true, 2n, executor]); // 4: a's execution
    moduleLog(tx, a, [true, 4n, hook], 'indexed'); // 5: an implementation that indexes both
    tx.opEvent(EP07, { hash: hash(1), sender: a, nonce: 0n }); // 6
    moduleLog(tx, b, [false, 2n, executor]); // 7: b's execution
    tx.opEvent(EP07, { hash: hash(2), sender: b, nonce: 3n }); // 8
    expect(eventsOf(tx)).to.deep.equal([
      { logIndex: 1, account: a, userOpHash: hash(1), installed: true, moduleTypeId: 1n, module: validator },
      { logIndex: 4, account: a, userOpHash: hash(1), installed: true, moduleTypeId: 2n, module: executor },
      { logIndex: 5, account: a, userOpHash: hash(1), installed: true, moduleTypeId: 4n, module: hook },
      { logIndex: 7, account: b, userOpHash: hash(2), installed: false, moduleTypeId: 2n, module: executor },
    ]);
  });

  it("leaves out events of other addresses, of an account called in another op's execution, and of another layout", () => {
    const tx = new TxBuilder();
    tx.beforeExecution(EP07); // 0
    moduleLog(tx, addr(0xc), [true, 2n, executor]); // 1: not a sender of the transaction
    moduleLog(tx, a, [true, 2n, executor], 'extraWord'); // 2: in a's execution, but not the standard's event
    moduleLog(tx, b, [true, 2n, executor]); // 3: b, called by a's execution, has an op later in the bundle
    tx.opEvent(EP07, { hash: hash(1), sender: a, nonce: 0n }); // 4
    tx.opEvent(EP07, { hash: hash(2), sender: b, nonce: 0n }); // 5
    moduleLog(tx, a, [true, 2n, executor]); // 6: after every op of a
    expect(eventsOf(tx)).to.deep.equal([]);
  });
});
