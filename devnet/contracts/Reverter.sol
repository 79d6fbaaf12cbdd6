// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Reverts on demand, so user operations can fail inside execution with a known payload.
contract Reverter {
    /// Reverts with `Error(string)`: the EntryPoint emits UserOperationRevertReason with it.
    function fail(string calldata reason) external pure {
        revert(reason);
    }

    /// Reverts with empty data: the EntryPoint emits no UserOperationRevertReason.
    function failEmpty() external pure {
        assembly {
            revert(0, 0)
        }
    }
}
