// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Reverts on demand, so user operations can fail inside execution with a known payload.
contract Reverter {
    /// OpenZeppelin's IERC20Errors declaration: a custom error whose signature explorers ship.
    error ERC20InsufficientBalance(address sender, uint256 balance, uint256 needed);
    /// A custom error no explorer's ABIs declare.
    error Refused(uint256 code);

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

    /// Reverts with a custom error, as an OpenZeppelin token does when the caller's balance is short.
    function failCustom(uint256 needed) external view {
        revert ERC20InsufficientBalance(msg.sender, 0, needed);
    }

    /// Reverts with a custom error of its own.
    function failUnknown(uint256 code) external pure {
        revert Refused(code);
    }

    /// Panics with an arithmetic underflow (checked arithmetic: Panic(0x11)).
    function failPanic(uint256 amount) external pure returns (uint256) {
        return amount - (amount + 1);
    }
}
