// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

/// Minimal ERC-721 with open minting. No receiver hooks: the devnet only needs the Transfer logs.
contract TestERC721 {
    string public constant name = "Devnet NFT";
    string public constant symbol = "DNFT";
    mapping(uint256 => address) public ownerOf;
    mapping(address => uint256) public balanceOf;
    mapping(uint256 => address) public getApproved;

    event Transfer(address indexed from, address indexed to, uint256 indexed tokenId);
    event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId);

    function mint(address to, uint256 tokenId) external {
        require(ownerOf[tokenId] == address(0), "ERC721: already minted");
        ownerOf[tokenId] = to;
        balanceOf[to] += 1;
        emit Transfer(address(0), to, tokenId);
    }

    function approve(address approved, uint256 tokenId) external {
        require(ownerOf[tokenId] == msg.sender, "ERC721: not owner");
        getApproved[tokenId] = approved;
        emit Approval(msg.sender, approved, tokenId);
    }

    function transferFrom(address from, address to, uint256 tokenId) public {
        require(ownerOf[tokenId] == from, "ERC721: wrong from");
        require(msg.sender == from || getApproved[tokenId] == msg.sender, "ERC721: not allowed");
        delete getApproved[tokenId];
        ownerOf[tokenId] = to;
        balanceOf[from] -= 1;
        balanceOf[to] += 1;
        emit Transfer(from, to, tokenId);
    }

    function safeTransferFrom(address from, address to, uint256 tokenId) external {
        transferFrom(from, to, tokenId);
    }
}
