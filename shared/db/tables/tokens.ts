import { bytea, type Queryable } from '../client.js';

/** Reads of `tokens`: metadata of the tokens seen in transfers. */

export type Token = {
  address: string;
  standard: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
};

/** The tokens an address sent or received, ERC-20 and ERC-721 (the ones with a balanceOf(owner)), and ERC-1155. */
export async function listSeenBy(db: Queryable, chainId: number, address: string): Promise<Token[]> {
  const { rows } = await db.query<Token>(
    `select s.token as address, s.standard, t.name, t.symbol, t.decimals
     from (select token, min(standard) as standard from (
             select token, standard from token_transfers
             where chain_id = $1 and from_address = $2 and standard in ('ERC20', 'ERC721', 'ERC1155')
             union
             select token, standard from token_transfers
             where chain_id = $1 and to_address = $2 and standard in ('ERC20', 'ERC721', 'ERC1155')
           ) u group by token) s
     left join tokens t on t.chain_id = $1 and t.address = s.token
     order by s.token`,
    [chainId, bytea(address)],
  );
  return rows;
}

/**
 * The address's ERC-1155 holdings per (token, id): what its indexed transfers add up to (received
 * minus sent). Read from the index, not the chain: ERC-1155 has no way to list the ids an owner
 * holds, and the index has every transfer of a known address from the start block under
 * INDEXER_TRANSFERS=known (under ops, only those inside user ops). Ids summing to zero are left out.
 */
export async function listErc1155Holdings(
  db: Queryable,
  chainId: number,
  address: string,
): Promise<Array<{ token: string; tokenId: string; amount: string }>> {
  const { rows } = await db.query<{ token: string; token_id: string; amount: string }>(
    `select token, token_id::text as token_id, sum(delta)::text as amount from (
       select token, token_id, -value as delta from token_transfers where chain_id = $1 and from_address = $2 and standard = 'ERC1155'
       union all
       select token, token_id, value from token_transfers where chain_id = $1 and to_address = $2 and standard = 'ERC1155'
     ) u group by token, token_id having sum(delta) <> 0 order by token, token_id`,
    [chainId, bytea(address)],
  );
  return rows.map((r) => ({ token: r.token, tokenId: r.token_id, amount: r.amount }));
}

// Writes (the indexer): metadata is read once per token (name/symbol/decimals by eth_call).

/** Which of `addresses` already have a row (their metadata was read). */
export async function listKnown(db: Queryable, chainId: number, addresses: string[]): Promise<Set<string>> {
  if (addresses.length === 0) return new Set();
  const { rows } = await db.query<{ address: string }>(`select address from tokens where chain_id = $1 and address = any($2::bytea[])`, [
    chainId,
    addresses.map((a) => bytea(a)),
  ]);
  return new Set(rows.map((r) => r.address));
}

export async function insertMany(db: Queryable, chainId: number, tokens: Token[]): Promise<void> {
  if (tokens.length === 0) return;
  await db.query(
    `insert into tokens (chain_id, address, standard, name, symbol, decimals)
     select $1, * from unnest($2::bytea[], $3::text[], $4::text[], $5::text[], $6::integer[]) on conflict do nothing`,
    [
      chainId,
      tokens.map((t) => bytea(t.address)),
      tokens.map((t) => t.standard),
      tokens.map((t) => t.name),
      tokens.map((t) => t.symbol),
      tokens.map((t) => t.decimals),
    ],
  );
}

/** Sets one token's name or symbol (a batch written without its chain text puts it back so). */
export async function setText(
  db: Queryable,
  chainId: number,
  address: string,
  field: 'name' | 'symbol',
  text: string | null,
): Promise<void> {
  await db.query(`update tokens set ${field} = $3 where chain_id = $1 and address = $2`, [chainId, bytea(address), text]);
}
