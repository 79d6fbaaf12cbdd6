// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import "./UserOperationTypes.sol";

/// Sponsors every user operation sent to a v0.6 EntryPoint (no checks: a devnet fixture).
/// With `withPostOp` it returns a non-empty context, so the EntryPoint calls `postOp`,
/// which emits `PostOpCalled` among the op's execution logs.
contract SponsorPaymasterV06 {
    address public immutable entryPoint;
    bool public immutable withPostOp;

    event PostOpCalled(address indexed sender, PostOpMode mode, uint256 actualGasCost);

    constructor(address entryPoint_, bool withPostOp_) {
        entryPoint = entryPoint_;
        withPostOp = withPostOp_;
    }

    function validatePaymasterUserOp(UserOperationV06 calldata userOp, bytes32, uint256)
        external
        view
        returns (bytes memory context, uint256 validationData)
    {
        require(msg.sender == entryPoint, "paymaster: not from EntryPoint");
        if (withPostOp) context = abi.encode(userOp.sender);
        return (context, 0);
    }

    function postOp(PostOpMode mode, bytes calldata context, uint256 actualGasCost) external {
        require(msg.sender == entryPoint, "paymaster: not from EntryPoint");
        emit PostOpCalled(abi.decode(context, (address)), mode, actualGasCost);
    }
}
