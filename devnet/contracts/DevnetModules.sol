// SPDX-License-Identifier: MIT
// ERC-7579 modules the realistic devnet's modular accounts install and uninstall through ops: an
// executor and a hook that keep only whether each account has them installed. Kernel v3 asks a
// module isInitialized(account) besides the standard's functions; both answer it. The hook answers
// both interfaces accounts call hooks by: ERC-7579's, and the draft's that Etherspot's Modular
// Wallet 1.0.0 calls (preCheck without msg.value; a postCheck whose false reverts the call).
pragma solidity ^0.8.27;

import {IERC7579Module, MODULE_TYPE_EXECUTOR, MODULE_TYPE_HOOK} from "@openzeppelin/contracts/interfaces/draft-IERC7579.sol";

abstract contract DevnetModule is IERC7579Module {
    mapping(address account => bool) public isInitialized;

    function onInstall(bytes calldata) external {
        isInitialized[msg.sender] = true;
    }

    function onUninstall(bytes calldata) external {
        isInitialized[msg.sender] = false;
    }
}

contract DevnetExecutorModule is DevnetModule {
    function isModuleType(uint256 moduleTypeId) external pure returns (bool) {
        return moduleTypeId == MODULE_TYPE_EXECUTOR;
    }
}

contract DevnetHookModule is DevnetModule {
    function isModuleType(uint256 moduleTypeId) external pure returns (bool) {
        return moduleTypeId == MODULE_TYPE_HOOK;
    }

    /// ERC-7579's preCheck (Kernel v3, Nexus, Safe7579).
    function preCheck(address, uint256, bytes calldata) external pure returns (bytes memory) {
        return "";
    }

    /// The draft's preCheck(msgSender, msgData) (Etherspot's Modular Wallet 1.0.0).
    function preCheck(address, bytes calldata) external pure returns (bytes memory) {
        return "";
    }

    /// ERC-7579's postCheck returns nothing, which its callers ignore the true of; the draft's
    /// callers revert unless it returns true.
    function postCheck(bytes calldata) external pure returns (bool) {
        return true;
    }
}
