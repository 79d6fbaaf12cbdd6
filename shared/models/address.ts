import { z } from 'zod';
import { addressOut, hashOut } from './primitives.js';

/**
 * Address-level resources. Their shapes follow the data vendors the original service wrapped
 * (Covalent for transactions and balances, Alchemy for transfers), as the spec gives them.
 * Price fields are null unless a price source is configured.
 */

export const transactionSchema = z
  .object({
    block_signed_at: z.string(), // ISO 8601 UTC
    block_height: z.number().int(),
    tx_hash: hashOut,
    tx_offset: z.number().int(),
    successful: z.boolean(),
    from_address: addressOut,
    from_address_label: z.string().nullable(),
    to_address: addressOut.nullable(),
    to_address_label: z.string().nullable(),
    value: z.string(),
    value_quote: z.number().nullable(),
    pretty_value_quote: z.string().nullable(),
    gas_offered: z.number().int(),
    gas_spent: z.number().int(),
    gas_price: z.number(),
    fees_paid: z.string(),
    gas_quote: z.number().nullable(),
    pretty_gas_quote: z.string().nullable(),
    gas_quote_rate: z.number().nullable(),
  })
  .meta({ id: 'Transaction' });
export type Transaction = z.infer<typeof transactionSchema>;

/** Alchemy's `rawContract`: the exact amount and decimals in hex. */
const rawContractSchema = z.object({
  address: addressOut,
  value: z.string().nullable(),
  decimal: z.string().nullable(),
});

export const erc20TransferSchema = z
  .object({
    from: addressOut,
    to: addressOut,
    /** Amount in whole tokens (decimal-adjusted, as Alchemy answers); exact amount in rawContract. */
    value: z.number(),
    hash: hashOut,
    blockNum: z.number().int().optional(),
    asset: z.string().nullable().optional(),
    // The spec's spelling.
    catergory: z.string().optional(),
    // Read by real clients (contract.md §3.15).
    category: z.string(),
    rawContract: rawContractSchema,
    userOpHash: hashOut.nullable(),
    logIndex: z.number().int(),
    metadata: z.object({ blockTimestamp: z.string() }),
  })
  .meta({ id: 'ERC20Transfer' });
export type Erc20Transfer = z.infer<typeof erc20TransferSchema>;

export const nftTransferSchema = z
  .object({
    from: addressOut,
    to: addressOut,
    tokenId: z.string(),
    hash: hashOut,
    value: z.number().optional(),
    blockNum: z.number().int().optional(),
    asset: z.string().nullable().optional(),
    catergory: z.string().optional(),
    // Records of getAddressNFTTransfers also carry these (spec).
    erc721TokenId: z.string(),
    erc721Metadata: z.string(),
    rawContract: z.object({ address: addressOut }),
    category: z.string(),
    userOpHash: hashOut.nullable(),
    logIndex: z.number().int(),
    metadata: z.object({ blockTimestamp: z.string() }),
  })
  .meta({ id: 'NFTTransfer' });
export type NftTransfer = z.infer<typeof nftTransferSchema>;

export const balanceSchema = z
  .object({
    balance: z.string(),
    contract_address: addressOut,
    contract_name: z.string(),
    contract_ticker_symbol: z.string(),
    contract_decimals: z.number().int(),
    native_token: z.string(),
    quote_rate: z.string().nullable(),
    pretty_quote: z.string().nullable(),
    // Read by real clients (contract.md §3.13): the balance's USD value.
    quote: z.number().nullable(),
    // ERC-1155 only (one item per id held): the id, decimal. Absent on native, ERC-20 and ERC-721 items.
    token_id: z.string().optional(),
  })
  .meta({ id: 'Balance' });
export type Balance = z.infer<typeof balanceSchema>;
