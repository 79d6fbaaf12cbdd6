// SPDX-License-Identifier: MIT
// ERC-7579 modules the realistic devnet's modular accounts install and uninstall through ops: an
// executor and a hook that keep only whether each account has them installed. Kernel v3 asks a
// module isInitialized(account) besides the standard's functions; both answer it.
pragma solidity ^0.8.27;

import {IERC7579Module, IERC7579Hook, MODULE_TYPE_EXECUTOR, MODULE_TYPE_HOOK} from "@openzeppelin/contracts/interfaces/draft-IERC7579.sol";

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

contract DevnetHookModule is DevnetModule, IERC7579Hook {
    function isModuleType(uint256 moduleTypeId) external pure returns (bool) {
        return moduleTypeId == MODULE_TYPE_HOOK;
    }

    function preCheck(address, uint256, bytes calldata) external pure returns (bytes memory) {
        return "";
    }

    function postCheck(bytes calldata) external pure {}
}
