import net from 'node:net';

/**
 * A WebSocket proxy on loopback in front of a node's JSON-RPC WebSocket (anvil serves it on its
 * HTTP port), that a test can cut like tcpProxy.ts (`cut()` drops every connection and refuses new
 * ones, `restore()` lets them through) and that can silently drop the node's `eth_subscription`
 * messages (`dropAnnouncements`) while the socket stays up: a subscription that misses heads; or
 * stop passing anything on the connections open now while keeping them open (`silenceOpen()`): a
 * connection a NAT forgot.
 *
 * It reads the node's frames to do so: the client's upgrade request goes up without its
 * Sec-WebSocket-Extensions header, so no frame is compressed; server frames are never masked.
 */
export type WsProxy = {
  readonly url: string;
  /** Connections accepted since start. */
  readonly connections: number;
  /** Node messages that are not announcements (subscription confirmations, call answers) passed on. */
  readonly replies: number;
  /** Announcements passed on, and dropped. */
  readonly announcements: number;
  readonly dropped: number;
  dropAnnouncements: boolean;
  silenceOpen(): void;
  cut(): void;
  restore(): void;
  close(): Promise<void>;
};

const HEADER_END = Buffer.from('\r\n\r\n');

/** Splits off the HTTP head (request or 101 answer) once it has all arrived. */
function takeHead(buffer: Buffer): { head: Buffer; rest: Buffer } | null {
  const end = buffer.indexOf(HEADER_END);
  return end < 0 ? null : { head: buffer.subarray(0, end + 4), rest: buffer.subarray(end + 4) };
}

/** The length of the first whole frame in `buffer`, or 0 while it is incomplete. */
function frameLength(buffer: Buffer): number {
  if (buffer.length < 2) return 0;
  const masked = (buffer[1]! & 0x80) !== 0;
  let length = buffer[1]! & 0x7f;
  let offset = 2;
  if (length === 126) {
    if (buffer.length < 4) return 0;
    length = buffer.readUInt16BE(2);
    offset = 4;
  } else if (length === 127) {
    if (buffer.length < 10) return 0;
    length = Number(buffer.readBigUInt64BE(2));
    offset = 10;
  }
  const total = offset + (masked ? 4 : 0) + length;
  return buffer.length >= total ? total : 0;
}

export async function startWsProxy(target: { host: string; port: number }): Promise<WsProxy> {
  const open = new Set<net.Socket>();
  /** Client sockets whose frames, both ways, go nowhere. */
  const silenced = new Set<net.Socket>();
  let cut = false;
  const stats = { connections: 0, replies: 0, announcements: 0, dropped: 0 };
  const proxy = { dropAnnouncements: false };

  const server = net.createServer((client) => {
    if (cut) {
      client.destroy();
      return;
    }
    stats.connections++;
    const upstream = net.connect(target.port, target.host);
    open.add(client).add(upstream);
    const drop = () => {
      silenced.delete(client);
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);

    let request: Buffer | null = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      if (silenced.has(client)) return;
      if (request === null) {
        upstream.write(chunk);
        return;
      }
      request = Buffer.concat([request, chunk]);
      const split = takeHead(request);
      if (!split) return;
      request = null;
      const head = split.head
        .toString('latin1')
        .split('\r\n')
        .filter((line) => !/^sec-websocket-extensions:/i.test(line))
        .join('\r\n');
      upstream.write(Buffer.concat([Buffer.from(head, 'latin1'), split.rest]));
    });

    let answered = false;
    let pending: Buffer = Buffer.alloc(0);
    upstream.on('data', (chunk: Buffer) => {
      if (silenced.has(client)) return;
      pending = Buffer.concat([pending, chunk]);
      if (!answered) {
        const split = takeHead(pending);
        if (!split) return;
        answered = true;
        client.write(split.head);
        pending = split.rest;
      }
      for (let length = frameLength(pending); length > 0; length = frameLength(pending)) {
        const frame = pending.subarray(0, length);
        pending = pending.subarray(length);
        const isText = (frame[0]! & 0x0f) === 1;
        if (isText && frame.includes('"eth_subscription"')) {
          if (proxy.dropAnnouncements) {
            stats.dropped++;
            continue;
          }
          stats.announcements++;
        } else if (isText) stats.replies++;
        client.write(frame);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const cutAll = () => {
    cut = true;
    for (const socket of open) socket.destroy();
    open.clear();
  };
  return {
    get dropAnnouncements() {
      return proxy.dropAnnouncements;
    },
    set dropAnnouncements(drop: boolean) {
      proxy.dropAnnouncements = drop;
    },
    url: `ws://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    get connections() {
      return stats.connections;
    },
    get replies() {
      return stats.replies;
    },
    get announcements() {
      return stats.announcements;
    },
    get dropped() {
      return stats.dropped;
    },
    silenceOpen() {
      for (const socket of open) silenced.add(socket);
    },
    cut: cutAll,
    restore() {
      cut = false;
    },
    close() {
      cutAll();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
