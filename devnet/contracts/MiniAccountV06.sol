// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./UserOperationTypes.sol";
import "./MiniAccountBase.sol";

/// Mini account for the v0.6 EntryPoint (`UserOperation` struct).
contract MiniAccountV06 is MiniAccountBase {
    constructor(address entryPoint_, address owner_) MiniAccountBase(entryPoint_, owner_) {}

    function validateUserOp(UserOperationV06 calldata userOp, bytes32 userOpHash, uint256 missingAccountFunds)
        external
        returns (uint256 validationData)
    {
        return _validate(userOpHash, userOp.signature, missingAccountFunds);
    }
}

/// Deploys MiniAccountV06 directly with CREATE2 (no proxy, unlike SimpleAccountFactory).
contract MiniAccountFactoryV06 {
    address public immutable entryPoint;

    constructor(address entryPoint_) {
        entryPoint = entryPoint_;
    }

    function createAccount(address owner, uint256 salt) external returns (address account) {
        account = getAddress(owner, salt);
        if (account.code.length > 0) return account;
        return address(new MiniAccountV06{salt: bytes32(salt)}(entryPoint, owner));
    }

    function getAddress(address owner, uint256 salt) public view returns (address) {
        bytes memory initCode = abi.encodePacked(type(MiniAccountV06).creationCode, abi.encode(entryPoint, owner));
        bytes32 h = keccak256(abi.encodePacked(bytes1(0xff), address(this), bytes32(salt), keccak256(initCode)));
        return address(uint160(uint256(h)));
    }
}
