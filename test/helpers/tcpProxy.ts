import net from 'node:net';

/**
 * A TCP proxy on loopback in front of a real server (PostgreSQL, Redis), that a test can cut: `cut()`
 * destroys every open connection and refuses new ones (as a server restart or a network partition
 * looks to a client), `restore()` lets connections through again. `serverBytes`, when given, passes
 * each connection's server bytes on in its place (a test that rewrites what the server says).
 */
export type TcpProxy = {
  readonly port: number;
  /** Connections accepted since start. */
  readonly accepted: number;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
};

/** Made per connection: called with each chunk the server sends, instead of passing it on as it is. */
export type ServerBytes = (client: net.Socket, upstream: net.Socket) => (chunk: Buffer) => void;

export async function startTcpProxy(target: { host: string; port: number }, serverBytes?: ServerBytes): Promise<TcpProxy> {
  const open = new Set<net.Socket>();
  let cut = false;
  let accepted = 0;
  const server = net.createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    accepted++;
    const upstream = net.connect(target.port, target.host);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    if (serverBytes) upstream.on('data', serverBytes(client, upstream));
    else upstream.pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cutAll = () => {
    cut = true;
    for (const socket of open) socket.destroy();
    open.clear();
  };
  return {
    port: (server.address() as net.AddressInfo).port,
    get accepted() {
      return accepted;
    },
    cut: cutAll,
    restore() {
      cut = false;
    },
    close() {
      cutAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
