/**
 * An EOA that signs its own transactions with a locally tracked nonce, so the devnet can sign a
 * whole block's worth of bundles up front and send them without a round trip per transaction.
 */
import type { Wallet, TransactionRequest } from 'ethers';
import type { Rpc } from './rpc.js';

/** Bundle transactions pay basefee + 1 gwei; 20 gwei cap is far above anvil's decaying basefee. */
const MAX_FEE_PER_GAS = 20_000_000_000n;
const MAX_PRIORITY_FEE_PER_GAS = 1_000_000_000n;

export class LocalSigner {
  readonly address: string;
  private nonce = 0;

  constructor(
    readonly wallet: Wallet,
    private readonly chainId: number,
  ) {
    this.address = wallet.address.toLowerCase();
  }

  /** Re-reads the nonce from the chain (after start, or after a reorg rolled transactions back). */
  async syncNonce(rpc: Rpc): Promise<void> {
    this.nonce = Number(await rpc.call<string>('eth_getTransactionCount', [this.address, 'pending']));
  }

  /** The nonce the next signed transaction will use (to predict CREATE addresses). */
  get nextNonce(): number {
    return this.nonce;
  }

  async sign(tx: { to?: string; data?: string; value?: bigint; gasLimit: bigint }): Promise<string> {
    const request: TransactionRequest = {
      type: 2,
      chainId: this.chainId,
      nonce: this.nonce++,
      to: tx.to ?? null,
      data: tx.data ?? '0x',
      value: tx.value ?? 0n,
      gasLimit: tx.gasLimit,
      maxFeePerGas: MAX_FEE_PER_GAS,
      maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
    };
    return this.wallet.signTransaction(request);
  }
}
