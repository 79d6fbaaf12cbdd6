// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

// Local copies of the EntryPoint structs, so our test contracts need no package imports.
// Layouts follow @account-abstraction/contracts: v0.6 `UserOperation`, v0.7/v0.8 `PackedUserOperation`.

struct UserOperationV06 {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    uint256 callGasLimit;
    uint256 verificationGasLimit;
    uint256 preVerificationGas;
    uint256 maxFeePerGas;
    uint256 maxPriorityFeePerGas;
    bytes paymasterAndData;
    bytes signature;
}

struct PackedUserOperation {
    address sender;
    uint256 nonce;
    bytes initCode;
    bytes callData;
    bytes32 accountGasLimits;
    uint256 preVerificationGas;
    bytes32 gasFees;
    bytes paymasterAndData;
    bytes signature;
}

// Same order as IPaymaster.PostOpMode; ABI-encoded as uint8.
enum PostOpMode {
    opSucceeded,
    opReverted,
    postOpReverted
}
