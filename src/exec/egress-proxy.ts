import { lookup } from 'node:dns/promises';
import { BlockList, connect, createServer, isIP, type Server, type Socket } from 'node:net';
import { egressAllowed, formatEgressRule, type EgressRule } from './backend.ts';

/**
 * The egress proxy Mesh runs for a local workspace: the sandbox has no network of its own, and
 * this is the one way out. It speaks HTTP proxying (`CONNECT host:port` for TLS and anything
 * else, absolute-form requests for plain HTTP), allows exactly the workspace's allowlisted
 * destinations and refuses everything else with a 403 that names the destination, recording it
 * so the command's result can say what was refused.
 *
 * A host allowlisted by name must resolve to a public address: a name that points at loopback,
 * a private network or link-local (the control plane's own neighbourhood) is refused, so DNS
 * cannot turn an allowed name into a way back to Mesh. An IP literal the operator allowlisted is
 * taken as written (that is how a development setup allows a loopback service).
 */
export interface EgressProxy {
  /** Destinations refused since the last call, drained. */
  takeRefused(): string[];
  close(): Promise<void>;
}

const INTERNAL = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  INTERNAL.addSubnet(net, bits, 'ipv4');
for (const [net, bits] of [
  ['::1', 128],
  ['::', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  INTERNAL.addSubnet(net, bits, 'ipv6');

function isInternal(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return INTERNAL.check(mapped[1]!, 'ipv4');
  return INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
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
  const path = `${url.pathname}${url.search}`;
  return {
    host: url.hostname.replace(/^\[|\]$/g, '').toLowerCase(),
    port: url.port === '' ? 80 : Number(url.port),
    connect: false,
    // The request goes on in origin form; the headers and body follow unchanged.
    rest: `${method} ${path} ${version}${head.slice(lineEnd)}`,
  };
}

function refuse(socket: Socket, status: string, text: string): void {
  socket.end(
    `HTTP/1.1 ${status}\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
  );
}

/** Starts a proxy for one workspace on a Unix socket path. */
export async function startEgressProxy(
  socketPath: string,
  rules: readonly EgressRule[],
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
    const named = formatEgressRule({ host: dest.host, port: dest.port });
    if (!egressAllowed(rules, dest.host, dest.port)) {
      refused.push(named);
      refuse(
        client,
        '403 Forbidden',
        `egress to ${named} refused: it is not on this workspace's allowlist\n`,
      );
      return;
    }
    let address = dest.host;
    if (isIP(dest.host) === 0) {
      try {
        address = (await lookup(dest.host)).address;
      } catch {
        refuse(client, '502 Bad Gateway', `${dest.host} does not resolve\n`);
        return;
      }
      if (isInternal(address)) {
        refused.push(named);
        refuse(
          client,
          '403 Forbidden',
          `egress to ${named} refused: the name resolves to an internal address\n`,
        );
        return;
      }
    }
    const upstream = connect({ host: address, port: dest.port });
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
    server.listen(socketPath, () => resolve());
  });
  return {
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
