import type { Queryable } from '../client.js';

/** Reads of `tokens`: metadata of the tokens seen in transfers. */

export type Token = {
  address: string;
  standard: string;
  name: string | null;
  symbol: string | null;
  decimals: number | null;
};

/** The tokens an address sent or received, ERC-20 and ERC-721 (the ones with a balanceOf(owner)). */
export async function listSeenBy(db: Queryable, chainId: number, address: string): Promise<Token[]> {
  const { rows } = await db.query<Token>(
    `select s.token as address, s.standard, t.name, t.symbol, t.decimals
     from (select token, min(standard) as standard from (
             select token, standard from token_transfers
             where chain_id = $1 and from_address = $2 and standard in ('ERC20', 'ERC721')
             union
             select token, standard from token_transfers
             where chain_id = $1 and to_address = $2 and standard in ('ERC20', 'ERC721')
           ) u group by token) s
     left join tokens t on t.chain_id = $1 and t.address = s.token
     order by s.token`,
    [chainId, address],
  );
  return rows;
}
