/** Method names and decoded arguments of call frames, against inputs encoded by ethers (the reference). */
import { expect } from 'chai';
import { AbiCoder, FunctionFragment, Interface, concat, toBeHex, zeroPadValue } from 'ethers';
import { ACCOUNT_METHOD_SELECTORS } from '../../shared/calldata/accountCalls.js';
import { decodeCall } from '../../server/knownCalls.js';

const [a, b] = ['0x00000000000000000000000000000000000000aa', '0x00000000000000000000000000000000000000bb'];
const CHECKSUMMED = '0x5FF137D4b0FDCD49DcA30c7CF57E578a026d2789';
const abi = AbiCoder.defaultAbiCoder();
const encode = (signature: string, args: unknown[]): string =>
  new Interface([`function ${signature}`]).encodeFunctionData(signature.slice(0, signature.indexOf('(')), args);

describe('knownCalls.decodeCall', () => {
  it("the shared account-method table: every selector is its signature's", () => {
    for (const [selector, signature] of ACCOUNT_METHOD_SELECTORS) {
      expect(FunctionFragment.from(`function ${signature}`).selector, signature).to.equal(selector);
    }
  });

  it('decodes token calls with JSON values: decimal strings, lower-case addresses', () => {
    expect(decodeCall(encode('transfer(address,uint256)', [CHECKSUMMED, 10n ** 30n]))).to.deep.equal({
      method: 'transfer',
      decodedInput: [
        { name: 'to', type: 'address', value: CHECKSUMMED.toLowerCase() },
        { name: 'value', type: 'uint256', value: '1000000000000000000000000000000' },
      ],
    });
    expect(decodeCall(encode('approve(address,uint256)', [a, 1n]))?.method).to.equal('approve');
    expect(decodeCall(encode('transferFrom(address,address,uint256)', [a, b, 7n]))?.decodedInput.map((x) => x.value)).to.deep.equal([
      a,
      b,
      '7',
    ]);
    const nft = decodeCall(encode('safeTransferFrom(address,address,uint256,uint256,bytes)', [a, b, 3n, 4n, '0xABCD']))!;
    expect(nft.method).to.equal('safeTransferFrom');
    expect(nft.decodedInput.map((x) => x.value)).to.deep.equal([a, b, '3', '4', '0xabcd']);
    expect(decodeCall(encode('safeTransferFrom(address,address,uint256)', [a, b, 9n]))?.decodedInput.map((x) => x.name)).to.deep.equal([
      'from',
      'to',
      'tokenId',
    ]);
    expect(decodeCall(encode('deposit()', []))).to.deep.equal({ method: 'deposit', decodedInput: [] });
    expect(decodeCall(encode('withdraw(uint256)', [5n]))?.decodedInput).to.deep.equal([{ name: 'wad', type: 'uint256', value: '5' }]);
  });

  it('answers every executeBatch variant as the list of {target, value, data} the account makes', () => {
    const calls = [
      { target: a, value: '5', data: '0x01' },
      { target: b, value: '0', data: '0x' },
    ];
    const inputs = [
      encode('executeBatch((address,uint256,bytes)[])', [calls.map((c) => [c.target, BigInt(c.value), c.data])]),
      encode('executeBatch(address[],uint256[],bytes[])', [
        [a, b],
        [5n, 0n],
        ['0x01', '0x'],
      ]),
      // ERC-7579: mode byte 0 = 0x01 (batch).
      encode('execute(bytes32,bytes)', [
        `0x01${'00'.repeat(31)}`,
        abi.encode(['(address,uint256,bytes)[]'], [calls.map((c) => [c.target, BigInt(c.value), c.data])]),
      ]),
    ];
    for (const input of inputs) {
      const decoded = decodeCall(input)!;
      expect(decoded.method).to.match(/^execute/);
      const list = decoded.decodedInput.find((x) => x.name === 'calls')!;
      expect(list.type).to.equal('(address,uint256,bytes)[]');
      expect(list.value).to.deep.equal(calls);
    }
    // v0.6 SimpleAccount: no values.
    const noValues = decodeCall(encode('executeBatch(address[],bytes[])', [[a], ['0x02']]))!;
    expect(noValues.decodedInput).to.deep.equal([
      { name: 'calls', type: '(address,uint256,bytes)[]', value: [{ target: a, value: '0', data: '0x02' }] },
    ]);
  });

  it('answers single-call execute variants by their named arguments', () => {
    expect(decodeCall(encode('execute(address,uint256,bytes)', [a, 5n, '0x12']))).to.deep.equal({
      method: 'execute',
      decodedInput: [
        { name: 'dest', type: 'address', value: a },
        { name: 'value', type: 'uint256', value: '5' },
        { name: 'func', type: 'bytes', value: '0x12' },
      ],
    });
  });

  it('decodes Safe execTransaction and unpacks multiSend transactions', () => {
    const exec = decodeCall(
      encode('execTransaction(address,uint256,bytes,uint8,uint256,uint256,uint256,address,address,bytes)', [
        a,
        1n,
        '0x',
        0,
        0n,
        0n,
        0n,
        b,
        b,
        '0x99',
      ]),
    )!;
    expect(exec.method).to.equal('execTransaction');
    expect(exec.decodedInput.map((x) => x.name)).to.include.members(['to', 'value', 'data', 'operation', 'signatures']);
    const packed = concat(['0x00', a, toBeHex(7n, 32), toBeHex(2n, 32), '0xabcd', '0x01', b, toBeHex(0n, 32), toBeHex(0n, 32)]);
    expect(decodeCall(encode('multiSend(bytes)', [packed]))).to.deep.equal({
      method: 'multiSend',
      decodedInput: [
        {
          name: 'transactions',
          type: '(uint8,address,uint256,bytes)[]',
          value: [
            { operation: 0, target: a, value: '7', data: '0xabcd' },
            { operation: 1, target: b, value: '0', data: '0x' },
          ],
        },
      ],
    });
  });

  it('decodes EntryPoint calls with structs as objects by field name', () => {
    const op = [a, 1n, '0x', '0xb61d27f6', zeroPadValue('0x01', 32), 21000n, zeroPadValue('0x02', 32), '0x', '0x5151'];
    const packedOp =
      '(address sender,uint256 nonce,bytes initCode,bytes callData,bytes32 accountGasLimits,uint256 preVerificationGas,bytes32 gasFees,bytes paymasterAndData,bytes signature)';
    const handleOps = decodeCall(encode(`handleOps(${packedOp}[],address)`, [[op], b]))!;
    expect(handleOps.method).to.equal('handleOps');
    expect(handleOps.decodedInput[1]).to.deep.equal({ name: 'beneficiary', type: 'address', value: b });
    expect((handleOps.decodedInput[0]!.value as Array<Record<string, unknown>>)[0]).to.include({
      sender: a,
      nonce: '1',
      preVerificationGas: '21000',
      signature: '0x5151',
    });
    const validate = decodeCall(encode(`validateUserOp(${packedOp},bytes32,uint256)`, [op, zeroPadValue('0x42', 32), 3n]))!;
    expect(validate.method).to.equal('validateUserOp');
    expect(validate.decodedInput.map((x) => x.name)).to.deep.equal(['userOp', 'userOpHash', 'missingAccountFunds']);
    expect(decodeCall(encode('postOp(uint8,bytes,uint256,uint256)', [0, '0x', 1n, 2n]))?.method).to.equal('postOp');
    expect(decodeCall(encode('depositTo(address)', [a]))?.decodedInput).to.deep.equal([{ name: 'account', type: 'address', value: a }]);
  });

  it('answers null for unknown selectors, truncated arguments and non-calldata', () => {
    for (const input of ['0x12345678', '0xa9059cbb00', '0x', '', 'not hex', encode('transfer(address,uint256)', [a, 1n]).slice(0, 40)]) {
      expect(decodeCall(input), input).to.equal(null);
    }
  });
});
