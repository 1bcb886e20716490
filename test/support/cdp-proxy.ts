import type { IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Passes a WebSocket upgrade a vendor fake accepted on to a real Chromium's DevTools endpoint
 * (`ws://127.0.0.1:<port>/devtools/browser/<id>`), then pipes both ways: what a vendor's CDP
 * endpoint does once its auth let the client in.
 */
export function proxyToDevtools(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  devtoolsUrl: string,
): Socket {
  const target = new URL(devtoolsUrl);
  const upstream = connect(Number(target.port), target.hostname, () => {
    const lines = [
      `GET ${target.pathname} HTTP/1.1`,
      `Host: ${target.host}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${String(req.headers['sec-websocket-key'] ?? '')}`,
      `Sec-WebSocket-Version: ${String(req.headers['sec-websocket-version'] ?? '13')}`,
    ];
    const extensions = req.headers['sec-websocket-extensions'];
    if (typeof extensions === 'string') lines.push(`Sec-WebSocket-Extensions: ${extensions}`);
    upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  const end = () => {
    upstream.destroy();
    client.destroy();
  };
  upstream.on('error', end);
  client.on('error', end);
  upstream.on('close', end);
  client.on('close', end);
  return upstream;
}

/** Refuses an upgrade with an HTTP status, as a vendor's endpoint does on bad auth. */
export function refuseUpgrade(client: Duplex, status: number, text: string): void {
  client.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
