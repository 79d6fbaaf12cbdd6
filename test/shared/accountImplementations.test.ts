import { expect } from 'chai';
import { keccak256 } from 'ethers';
import { accountIdName, implementationCodeHash, isNamed, safeName } from '../../shared/accountImplementations.js';

const ZERO = `0x${'0'.repeat(40)}`;

describe('account implementation names', () => {
  it('names ERC-7579 accounts by the version their accountId() reports', () => {
    expect(accountIdName('biconomy.nexus.1.0.2')).to.equal('Nexus 1.0.2');
    expect(accountIdName('kernel.advanced.v0.3.1')).to.equal('Kernel v3.1');
    expect(accountIdName('kernel.advanced.v0.3.0-beta')).to.equal('Kernel v3.0');
    expect(accountIdName('etherspotwallet.modular.v1.0.0')).to.equal('Etherspot Modular Wallet 1.0.0');
    expect(accountIdName('@openzeppelin/contracts.AccountERC7579.v1.0.0')).to.equal('OpenZeppelin AccountERC7579');
    // Safe7579 names a Safe's module, not an account; others are not known.
    expect(accountIdName('rhinestone.safe7579.v1.0.0')).to.equal(null);
    expect(accountIdName('acme.wallet.9.9.9')).to.equal(null);
    expect(accountIdName(null)).to.equal(null);
  });

  it("hashes code with the contract's own address zeroed where it stands at a byte boundary", () => {
    const self = '0x00000000000000000000000000000000000000ab';
    const other = '0x00000000000000000000000000000000000000cd';
    const code = (address: string) => `0x7f${'00'.repeat(12)}${address.slice(2)}5b`;
    // The same build at two addresses, each holding its own address: one hash.
    expect(implementationCodeHash(code(self), self)).to.equal(implementationCodeHash(code(other), other));
    expect(implementationCodeHash(code(self), self)).to.equal(keccak256(code(ZERO)));
    // Another contract's address (an EntryPoint's) stays in the hash.
    expect(implementationCodeHash(code(other), self)).to.equal(keccak256(code(other)));
    // Half a byte off is not the address.
    const shifted = `0x0${self.slice(2)}0`;
    expect(implementationCodeHash(shifted, self)).to.equal(keccak256(shifted));
  });

  it('composes Safe names and tells named from unknown and not yet looked at', () => {
    expect(safeName('Safe 1.4.1', 'Safe7579 1.0.0')).to.equal('Safe 1.4.1 + Safe7579 1.0.0');
    expect(safeName('Safe 1.4.1', null)).to.equal('Safe 1.4.1');
    expect([isNamed('Kernel v3.1'), isNamed('unknown'), isNamed(null)]).to.deep.equal([true, false, false]);
  });
});
