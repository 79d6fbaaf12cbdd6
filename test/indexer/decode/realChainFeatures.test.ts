/**
 * What real chains show beyond the devnet: the
 * v0.9 paymaster-signature suffix, EIP-7702 senders (authorization list, initCode marker, v0.9
 * event), the OP-stack L1 data fee, and the account layouts the recorded transactions use.
 */
import { expect } from 'chai';
import { Interface, Wallet, concat, keccak256, toBeHex, toUtf8Bytes, zeroPadValue } from 'ethers';
import { userOpHash } from '../../../devnet/index.js';
import { decodeTransaction } from '../../../indexer/decode/decodeTransaction.js';
import { INITCODE_EIP7702_MARKER, delegatedAuthorities, hasEip7702InitCode } from '../../../indexer/decode/eip7702.js';
import { decoderFor } from '../../../indexer/decode/entryPointDecoder.js';
import { PAYMASTER_SIG_MAGIC, paymasterSignatureOf } from '../../../indexer/decode/entryPointV07.js';
import { decodeAccountCalls } from '../../../shared/calldata/accountCalls.js';
import type { EntryPointVersion } from '../../../shared/networks.js';
import { addr, handleOpsV07, hash, packPaymaster, TxBuilder } from './builders.js';
import { CANONICAL_ENTRYPOINTS, TOPICS } from '../../../shared/chain/constants.js';

const EP08 = CANONICAL_ENTRYPOINTS['v0.8'];
const EP09 = CANONICAL_ENTRYPOINTS['v0.9'];
const ENTRY_POINTS = new Map<string, EntryPointVersion>([
  [EP08, 'v0.8'],
  [EP09, 'v0.9'],
]);
const ctx = { chainId: 10, entryPoints: ENTRY_POINTS, traces: 'off' as const };
const beneficiary = addr(0xbe);

/** paymasterAndData ‖ signature ‖ uint16 length ‖ magic, as a v0.9 paymaster service appends it. */
const withPaymasterSignature = (pmd: string, signature: string): string =>
  concat([pmd, signature, zeroPadValue(toBeHex((signature.length - 2) / 2), 2), PAYMASTER_SIG_MAGIC]).toLowerCase();

/** The userOpHash v0.9 computes: EIP-712 as v0.8, paymasterAndData hashed without signature and length (magic kept). */
function v09Hash(op: Parameters<typeof userOpHash>[0], signature: string | null): string {
  const pmd = signature
    ? concat([op.paymasterAndData.slice(0, op.paymasterAndData.length - 2 * ((signature.length - 2) / 2 + 10)), PAYMASTER_SIG_MAGIC])
    : op.paymasterAndData;
  return userOpHash({ ...op, paymasterAndData: pmd }, 'v0.8', EP09, 10);
}

describe('decode: v0.9 paymaster signature', () => {
  const pm = addr(0x9a);
  const base = packPaymaster(pm, 60_000n, 7_000n, '0xc0ffee');
  const signature = `0x${'ab'.repeat(65)}`;

  it('splits the trailing signature off a v0.9 paymasterAndData; the gas limits and the raw bytes are kept', () => {
    const pmd = withPaymasterSignature(base, signature);
    const op = decoderFor('v0.9').decodeHandleOps(handleOpsV07([{ sender: addr(1), nonce: 0n, paymasterAndData: pmd }], beneficiary))!
      .ops[0]!;
    expect(op).to.include({
      paymasterSignature: signature,
      paymasterAndData: pmd,
      paymasterVerificationGasLimit: 60_000n,
      paymasterPostOpGasLimit: 7_000n,
    });
  });

  it('finds no signature without the magic, with a zero length, or with a length reaching into the gas limits', () => {
    expect(paymasterSignatureOf(base)).to.equal(null);
    expect(paymasterSignatureOf(concat([base, '0x0000', PAYMASTER_SIG_MAGIC]))).to.equal(null);
    // 52 bytes of paymaster and limits, a 4-byte "signature" claiming 40 bytes: the EntryPoint reverts such an op.
    expect(paymasterSignatureOf(concat([packPaymaster(pm, 1n, 1n), '0x01020304', '0x0028', PAYMASTER_SIG_MAGIC]))).to.equal(null);
    expect(paymasterSignatureOf(withPaymasterSignature(packPaymaster(pm, 1n, 1n), '0x01020304'))).to.equal('0x01020304');
  });

  it('reads the magic as data before v0.9 (v0.8 has no paymaster signature)', () => {
    const pmd = withPaymasterSignature(base, signature);
    const op = decoderFor('v0.8').decodeHandleOps(handleOpsV07([{ sender: addr(1), nonce: 0n, paymasterAndData: pmd }], beneficiary))!
      .ops[0]!;
    expect(op.paymasterSignature).to.equal(null);
  });

  it('keeps every field the v0.9 userOpHash covers: two signatures of one op hash alike, other paymaster data does not', () => {
    const fields = {
      sender: addr(2),
      nonce: 3n,
      initCode: '0x',
      callData: '0xb61d27f6',
      callGasLimit: 1n,
      verificationGasLimit: 2n,
      preVerificationGas: 3n,
      maxFeePerGas: 5n,
      maxPriorityFeePerGas: 4n,
      signature: '0x01',
    };
    const decode = (pmd: string) =>
      decoderFor('v0.9').decodeHandleOps(handleOpsV07([{ ...fields, paymasterAndData: pmd }], beneficiary))!.ops[0]!;
    const [one, two] = [signature, `0x${'cd'.repeat(70)}`].map((s) => decode(withPaymasterSignature(base, s)));
    const hashOf = (op: typeof one): string => v09Hash(op!, op!.paymasterSignature);
    expect(hashOf(one)).to.equal(hashOf(two));
    expect(hashOf(decode(withPaymasterSignature(packPaymaster(pm, 60_000n, 7_000n, '0xc0ffef'), signature)))).to.not.equal(hashOf(one));
  });
});

describe('decode: EIP-7702 senders', () => {
  const owner = new Wallet(keccak256(toUtf8Bytes('opscan 7702 owner')));
  const delegate = addr(0xde1e);
  const authorization = (chainId: bigint, address = delegate) => {
    const a = owner.authorizeSync({ address, nonce: 36n, chainId });
    return {
      chainId: toBeHex(a.chainId),
      address: a.address,
      nonce: toBeHex(a.nonce),
      yParity: toBeHex(a.signature.yParity),
      r: a.signature.r,
      s: a.signature.s,
    };
  };
  const tx7702 = (authorizationList: ReturnType<typeof authorization>[]) => ({
    hash: hash(1),
    from: addr(0xb0b),
    to: EP09,
    input: '0x',
    blockHash: hash(2),
    authorizationList,
  });

  it('recovers the authorities of the transaction’s authorizations for this chain (or any chain), not revocations', () => {
    const me = owner.address.toLowerCase();
    expect([...delegatedAuthorities(tx7702([authorization(10n)]), 10)]).to.deep.equal([me]);
    expect([...delegatedAuthorities(tx7702([authorization(0n)]), 10)]).to.deep.equal([me]);
    expect([...delegatedAuthorities(tx7702([authorization(1n)]), 10)]).to.deep.equal([]);
    expect([...delegatedAuthorities(tx7702([authorization(10n, '0x0000000000000000000000000000000000000000')]), 10)]).to.deep.equal([]);
    expect([...delegatedAuthorities({ ...tx7702([]), authorizationList: undefined }, 10)]).to.deep.equal([]);
  });

  it('knows v0.9’s EIP7702AccountInitialized topic', () => {
    expect(TOPICS.eip7702AccountInitialized).to.equal('0x7c9f9ade6a03a0bba484e52df872467a270e798ffc1adab9dfaa8d0e627f0544');
  });

  it('reads the 0x7702 initCode marker from v0.8 on, with or without init data', () => {
    expect(hasEip7702InitCode('v0.8', INITCODE_EIP7702_MARKER)).to.equal(true);
    expect(hasEip7702InitCode('v0.9', `${INITCODE_EIP7702_MARKER}abcdef`)).to.equal(true);
    expect(hasEip7702InitCode('v0.7', INITCODE_EIP7702_MARKER)).to.equal(false);
    expect(hasEip7702InitCode('v0.8', addr(0x7702))).to.equal(false);
    expect(hasEip7702InitCode('v0.8', '0x')).to.equal(false);
    // What viem sends (factory "0x7702" and no data): the EntryPoint reads the rest of the 20 bytes as zeros.
    expect(hasEip7702InitCode('v0.8', '0x7702')).to.equal(true);
    expect(hasEip7702InitCode('v0.9', '0x770200')).to.equal(true);
    expect(hasEip7702InitCode('v0.8', '0x77')).to.equal(false);
    expect(hasEip7702InitCode('v0.8', '0x7702000000000000000000000000000000000001')).to.equal(false);
  });

  it('flags the op whose sender the transaction delegates, and only it', () => {
    const sender = owner.address.toLowerCase();
    const other = addr(5);
    const b = new TxBuilder()
      .beforeExecution(EP09)
      .opEvent(EP09, { hash: hash(10), sender, nonce: 1n })
      .opEvent(EP09, { hash: hash(11), sender: other, nonce: 1n });
    const raw = b.raw(
      handleOpsV07(
        [
          { sender, nonce: 1n },
          { sender: other, nonce: 1n },
        ],
        beneficiary,
      ),
      { to: EP09 },
    );
    raw.tx.authorizationList = [authorization(10n)];
    const d = decodeTransaction(raw, ctx);
    expect(d.userOps.map((o) => [o.sender, o.eip7702, o.factory])).to.deep.equal([
      [sender, true, null],
      [other, false, null],
    ]);
  });

  it('flags an op by its 7702 initCode (v0.8) and by v0.9 EIP7702AccountInitialized, without crediting a factory', () => {
    const [s8, s9] = [addr(8), addr(9)];
    const b = new TxBuilder().beforeExecution(EP08).opEvent(EP08, { hash: hash(20), sender: s8, nonce: 0n });
    const d8 = decodeTransaction(
      b.raw(handleOpsV07([{ sender: s8, nonce: 0n, initCode: INITCODE_EIP7702_MARKER }], beneficiary), { to: EP08 }),
      ctx,
    );
    expect(d8.userOps.map((o) => [o.eip7702, o.factory])).to.deep.equal([[true, null]]);
    const c = new TxBuilder().beforeExecution(EP09).opEvent(EP09, { hash: hash(21), sender: s9, nonce: 0n });
    // Emitted in validation, before BeforeExecution: EIP7702AccountInitialized(userOpHash, sender, delegate), all indexed.
    const initialized = [TOPICS.eip7702AccountInitialized, hash(21), zeroPadValue(s9, 32), zeroPadValue(addr(0xde1e), 32)];
    c.logs.unshift({ ...c.logs[0]!, topics: initialized, data: '0x', logIndex: '0x0' });
    c.logs.slice(1).forEach((l, i) => (l.logIndex = toBeHex(i + 1)));
    const d9 = decodeTransaction(c.raw('0x', { to: addr(0x3c) }), ctx);
    expect(d9.userOps.map((o) => [o.eip7702, o.factory])).to.deep.equal([[true, null]]);
  });
});

describe('decode: OP-stack L1 data fee', () => {
  it('adds the receipt’s l1Fee to the transaction fee and keeps it beside; none on chains without it', () => {
    const b = new TxBuilder().beforeExecution(EP09).opEvent(EP09, { hash: hash(30), sender: addr(1), nonce: 0n });
    const raw = b.raw(handleOpsV07([{ sender: addr(1), nonce: 0n }], beneficiary), { to: EP09 });
    const l2Fee = BigInt(raw.receipt.gasUsed) * BigInt(raw.receipt.effectiveGasPrice);
    expect(decodeTransaction(raw, ctx).bundleTx).to.include({ fee: l2Fee, l1Fee: null });
    raw.receipt.l1Fee = '0xbc12e5fa1';
    expect(decodeTransaction(raw, ctx).bundleTx).to.include({ fee: l2Fee + 0xbc12e5fa1n, l1Fee: 0xbc12e5fa1n });
  });
});

describe('decode: account layouts seen on real chains', () => {
  const accounts = new Interface([
    'function execTransactionFromEntrypoint(address,uint256,bytes)',
    'function executeBySender((address,uint256,bytes)[])',
    'function executeWithoutChainIdValidation(bytes[])',
    'function execute((address,uint256,bytes))',
  ]);
  const [a, b, me] = [addr(0xa), addr(0xb), addr(0x5e1f)];

  it('decodes execTransactionFromEntrypoint, Ambire executeBySender, and Coinbase executeWithoutChainIdValidation (calls to the account itself)', () => {
    expect(decodeAccountCalls(accounts.encodeFunctionData('execTransactionFromEntrypoint', [a, 3n, '0x1234']))).to.deep.equal([
      { target: a, value: 3n, data: '0x1234' },
    ]);
    expect(
      decodeAccountCalls(
        accounts.encodeFunctionData('executeBySender', [
          [
            [a, 1n, '0x'],
            [b, 0n, '0xabcd'],
          ],
        ]),
      ),
    ).to.deep.equal([
      { target: a, value: 1n, data: '0x' },
      { target: b, value: 0n, data: '0xabcd' },
    ]);
    const selfCalls = accounts.encodeFunctionData('executeWithoutChainIdValidation', [['0x0f0f3f24', '0x89625b57']]);
    expect(decodeAccountCalls(selfCalls, me.toUpperCase().replace('0X', '0x'))).to.deep.equal([
      { target: me, value: 0n, data: '0x0f0f3f24' },
      { target: me, value: 0n, data: '0x89625b57' },
    ]);
    expect(decodeAccountCalls(selfCalls), 'without the account the targets are unknown').to.deep.equal([]);
  });

  it("decodes a MetaMask DeleGator's execute(Execution), the one call @metamask/smart-accounts-kit sends alone", () => {
    expect(decodeAccountCalls(accounts.encodeFunctionData('execute', [[a, 5n, '0xabcdef']]))).to.deep.equal([
      { target: a, value: 5n, data: '0xabcdef' },
    ]);
    expect(decodeAccountCalls(accounts.encodeFunctionData('execute', [[b, 0n, '0x']]))).to.deep.equal([
      { target: b, value: 0n, data: '0x' },
    ]);
  });
});
