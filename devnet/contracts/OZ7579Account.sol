// SPDX-License-Identifier: MIT
// An ERC-7579 modular account for the realistic devnet: OpenZeppelin Contracts 5.7's AccountERC7579
// (module management, execute(mode, executionCalldata) in single, batch and delegatecall modes),
// from the npm package's sources, made concrete with SignerECDSA as the validator used when the
// op's nonce key names no installed validator module. OZ's account defaults to the canonical
// EntryPoint v0.9; this one takes its EntryPoint in the constructor. A factory clones it (ERC-1167)
// per owner and index, as Kernel's and Nexus' factories do.
pragma solidity ^0.8.27;

import {IEntryPoint} from "@openzeppelin/contracts/interfaces/IERC4337.sol";
import {Account} from "@openzeppelin/contracts/account/Account.sol";
import {AccountERC7579} from "@openzeppelin/contracts/account/extensions/draft-AccountERC7579.sol";
import {SignerECDSA} from "@openzeppelin/contracts/utils/cryptography/signers/SignerECDSA.sol";
import {Initializable} from "@openzeppelin/contracts/proxy/utils/Initializable.sol";
import {Clones} from "@openzeppelin/contracts/proxy/Clones.sol";

contract OZ7579Account is AccountERC7579, SignerECDSA, Initializable {
    IEntryPoint private immutable _entryPoint;

    constructor(IEntryPoint ep) SignerECDSA(address(0)) {
        _entryPoint = ep;
        _disableInitializers();
    }

    function initialize(address owner) external initializer {
        _setSigner(owner);
    }

    function entryPoint() public view override returns (IEntryPoint) {
        return _entryPoint;
    }

    function _rawSignatureValidation(
        bytes32 hash,
        bytes calldata signature
    ) internal view override(AccountERC7579, SignerECDSA) returns (bool) {
        return SignerECDSA._rawSignatureValidation(hash, signature);
    }
}

contract OZ7579AccountFactory {
    address public immutable implementation;

    constructor(IEntryPoint ep) {
        implementation = address(new OZ7579Account(ep));
    }

    function createAccount(address owner, uint256 index) external returns (address account) {
        bytes32 salt = keccak256(abi.encode(owner, index));
        account = Clones.predictDeterministicAddress(implementation, salt);
        if (account.code.length == 0) {
            Clones.cloneDeterministic(implementation, salt);
            OZ7579Account(payable(account)).initialize(owner);
        }
    }

    function getAddress(address owner, uint256 index) external view returns (address) {
        return Clones.predictDeterministicAddress(implementation, keccak256(abi.encode(owner, index)));
    }
}
