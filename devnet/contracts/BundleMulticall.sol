// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Lets one transaction carry several bundles: it calls `handleOps` on each EntryPoint in turn
/// (the bundler is then the transaction sender, and this contract is the handleOps caller).
/// `aggregate` carries the handleOps calldata as it is; `aggregateMasked` hides it.
contract BundleMulticall {
    struct Call {
        address target;
        bytes data;
    }

    function aggregate(Call[] calldata calls) external {
        for (uint256 i = 0; i < calls.length; i++) {
            forward(calls[i].target, calls[i].data);
        }
    }

    /// The same with every byte of each call's data XOR-ed with `mask`: the bundles' calldata is
    /// not readable in the transaction input (as with a bundler contract that compresses it), so
    /// only a trace shows it.
    function aggregateMasked(Call[] calldata calls, bytes1 mask) external {
        for (uint256 i = 0; i < calls.length; i++) {
            bytes memory data = calls[i].data;
            for (uint256 j = 0; j < data.length; j++) {
                data[j] ^= mask;
            }
            forward(calls[i].target, data);
        }
    }

    function forward(address target, bytes memory data) private {
        (bool ok, bytes memory result) = target.call(data);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
    }
}
