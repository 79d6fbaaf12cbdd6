// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Lets one transaction carry several bundles: it calls `handleOps` on each EntryPoint in turn
/// (the bundler is then the transaction sender, and this contract is the handleOps caller).
contract BundleMulticall {
    struct Call {
        address target;
        bytes data;
    }

    function aggregate(Call[] calldata calls) external {
        for (uint256 i = 0; i < calls.length; i++) {
            (bool ok, bytes memory result) = calls[i].target.call(calls[i].data);
            if (!ok) {
                assembly {
                    revert(add(result, 32), mload(result))
                }
            }
        }
    }
}
