// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Minimal ERC-1155 with open minting. No receiver hooks: the devnet only needs the
/// TransferSingle logs.
contract TestERC1155 {
    mapping(uint256 => mapping(address => uint256)) public balanceOf;

    event TransferSingle(address indexed operator, address indexed from, address indexed to, uint256 id, uint256 value);

    function mint(address to, uint256 id, uint256 amount) external {
        balanceOf[id][to] += amount;
        emit TransferSingle(msg.sender, address(0), to, id, amount);
    }

    function safeTransferFrom(address from, address to, uint256 id, uint256 amount, bytes calldata) external {
        require(from == msg.sender, "ERC1155: not owner");
        require(balanceOf[id][from] >= amount, "ERC1155: insufficient balance");
        balanceOf[id][from] -= amount;
        balanceOf[id][to] += amount;
        emit TransferSingle(msg.sender, from, to, id, amount);
    }
}
