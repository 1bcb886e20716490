import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * The egress proxy Mesh runs in front of what it does not trust to open its own connections: a
 * local workspace's sandbox (which has no network but this) and a development browser (launched
 * with this as its proxy, loopback included). It speaks HTTP proxying (`CONNECT host:port` for TLS,
 * WebSockets and anything else; absolute-form requests for plain HTTP), asks its admission rule
 * about every connection where the socket is opened, and connects to the address the rule
 * resolved and checked (a name is never resolved twice, so DNS cannot change its answer between
 * the check and the connection). A redirect, a subresource, a new window: each is a new request
 * here, checked again. A refusal is answered 403 with the rule's reason and recorded.
 */

/** Whether a destination may be reached: the address to connect to, or why not. */
export type Admission =
  | { readonly address: string }
  | {
      readonly refused: string;
      /** The name does not resolve: an answer of 502, not a refusal by policy. */
      readonly unresolved?: boolean;
    };

/** The rule a proxy holds every connection to: given a host and port, where to connect. */
export type Admit = (host: string, port: number) => Promise<Admission>;

export interface EgressProxy {
  /** The loopback port it listens on (a TCP proxy); undefined on a Unix socket. */
  readonly port: number | undefined;
  /** Destinations refused since the last call, drained. */
  takeRefused(): string[];
  close(): Promise<void>;
}

/** Where a request head asks to go: `CONNECT h:p` or an absolute-form `http://h:p/…` URI. */
function destinationOf(
  head: string,
): { host: string; port: number; connect: boolean; rest: string } | undefined {
  const lineEnd = head.indexOf('\r\n');
  const [method, target, version] = head.slice(0, lineEnd).split(' ');
  if (!method || !target || !version?.startsWith('HTTP/')) return undefined;
  if (method === 'CONNECT') {
    const match = /^(\[[0-9a-fA-F:.]+\]|[^:/\s]+):(\d{1,5})$/.exec(target);
    if (!match) return undefined;
    return {
      host: match[1]!.replace(/^\[|\]$/g, '').toLowerCase(),
      port: Number(match[2]),
      connect: true,
      rest: '',
    };
  }
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:') return undefined;
  // One request per connection: a client reusing it for another host would otherwise be piped to
  // the first one's server, past the check. The hop-by-hop proxy headers stay here.
  const headers = head
    .slice(lineEnd + 2, head.length - 4)
    .split('\r\n')
    .filter((line) => !/^(proxy-connection|connection|keep-alive)\s*:/i.test(line));
  return {
    host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(),
    port: url.port === '' ? 80 : Number(url.port),
    connect: false,
    rest: [`${method} ${url.pathname}${url.search} ${version}`, ...headers, 'connection: close']
      .join('\r\n')
      .concat('\r\n\r\n'),
  };
}

function refuse(socket: Socket, status: string, text: string): void {
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

/**
 * Starts a proxy that holds every connection to `admit`: on a Unix socket (`path`), or on a
 * loopback TCP port (`port`, 0 for any free one).
 */
export async function startEgressProxy(
  listen: { readonly path: string } | { readonly port: number },
  admit: Admit,
): Promise<EgressProxy> {
  let refused: string[] = [];
  const open = new Set<Socket>();
  const server: Server = createServer((client) => {
    open.add(client);
    client.on('close', () => open.delete(client));
    client.on('error', () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) {
        if (head.length > 16 * 1024) refuse(client, '431 Request Header Fields Too Large', '');
        return;
      }
      client.off('data', onData);
      client.pause();
      void forward(client, head.subarray(0, end + 4).toString('latin1'), head.subarray(end + 4));
    };
    client.on('data', onData);
  });

  async function forward(client: Socket, head: string, body: Buffer): Promise<void> {
    const dest = destinationOf(head);
    if (!dest) {
      refuse(client, '400 Bad Request', 'the egress proxy takes CONNECT or absolute http URIs\n');
      return;
    }
    const named = dest.host.includes(':')
      ? `[${dest.host}]:${dest.port}`
      : `${dest.host}:${dest.port}`;
    const admission = await admit(dest.host, dest.port).catch((): Admission => ({
      refused: `egress to ${named} refused: its check failed`,
    }));
    if ('refused' in admission) {
      if (admission.unresolved) refuse(client, '502 Bad Gateway', `${admission.refused}\n`);
      else {
        refused.push(named);
        refuse(client, '403 Forbidden', `${admission.refused}\n`);
      }
      return;
    }
    const upstream = connect({ host: admission.address, port: dest.port });
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.once('error', () => {
      if (!client.destroyed) refuse(client, '502 Bad Gateway', `could not reach ${named}\n`);
      upstream.destroy();
    });
    upstream.once('connect', () => {
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
      if (dest.connect) client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      else upstream.write(dest.rest, 'latin1');
      if (body.length > 0) upstream.write(body);
      client.pipe(upstream).pipe(client);
      client.resume();
    });
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    if ('path' in listen) server.listen(listen.path, () => resolve());
    else server.listen(listen.port, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address !== null ? address.port : undefined,
    takeRefused() {
      const out = refused;
      refused = [];
      return out;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of open) s.destroy();
        server.close(() => resolve());
      }),
  };
}
