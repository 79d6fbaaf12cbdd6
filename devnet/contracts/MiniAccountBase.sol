// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// The parts of our "mini" account shared by every EntryPoint version: owner-only execution and a
/// signature check over the raw userOpHash (no eth-signed-message prefix, unlike SimpleAccount
/// v0.6/v0.7), so an indexer sees an account family different from the reference SimpleAccount.
/// Execution follows the v0.8 BaseAccount shape: `execute(address,uint256,bytes)` and
/// `executeBatch((address,uint256,bytes)[])`.
abstract contract MiniAccountBase {
    struct Call {
        address target;
        uint256 value;
        bytes data;
    }

    address public immutable entryPoint;
    address public immutable owner;

    constructor(address entryPoint_, address owner_) {
        entryPoint = entryPoint_;
        owner = owner_;
    }

    receive() external payable {}

    function execute(address target, uint256 value, bytes calldata data) external {
        _requireFromEntryPointOrOwner();
        _call(target, value, data);
    }

    function executeBatch(Call[] calldata calls) external {
        _requireFromEntryPointOrOwner();
        for (uint256 i = 0; i < calls.length; i++) {
            _call(calls[i].target, calls[i].value, calls[i].data);
        }
    }

    /// Returns 0 when `signature` is the owner's over `userOpHash`, 1 (SIG_VALIDATION_FAILED) otherwise,
    /// and pays the EntryPoint what it asks for.
    function _validate(bytes32 userOpHash, bytes calldata signature, uint256 missingAccountFunds)
        internal
        returns (uint256 validationData)
    {
        require(msg.sender == entryPoint, "account: not from EntryPoint");
        validationData = _recover(userOpHash, signature) == owner ? 0 : 1;
        if (missingAccountFunds > 0) {
            // The EntryPoint checks the deposit itself; a failed payment surfaces there.
            (bool paid, ) = payable(msg.sender).call{value: missingAccountFunds}("");
            paid;
        }
    }

    function _requireFromEntryPointOrOwner() internal view {
        require(msg.sender == entryPoint || msg.sender == owner, "account: not EntryPoint or owner");
    }

    /// Bubbles the callee's revert data up unchanged, so the EntryPoint's UserOperationRevertReason
    /// carries exactly what the target reverted with (empty stays empty).
    function _call(address target, uint256 value, bytes calldata data) internal {
        (bool ok, bytes memory result) = target.call{value: value}(data);
        if (!ok) {
            assembly {
                revert(add(result, 32), mload(result))
            }
        }
    }

    function _recover(bytes32 digest, bytes calldata signature) internal pure returns (address) {
        if (signature.length != 65) return address(0);
        bytes32 r = bytes32(signature[0:32]);
        bytes32 s = bytes32(signature[32:64]);
        uint8 v = uint8(signature[64]);
        return ecrecover(digest, v, r, s);
    }
}
