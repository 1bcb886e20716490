import http from 'node:http';
import type https from 'node:https';
import type { AddressInfo } from 'node:net';
import { expect, vi } from 'vitest';
import { hasCode } from '../../src/tool/errors.ts';
import { EgressRefusedError, type ResolvedAddress } from '../../src/egress/guarded-fetch.ts';

/* Loopback servers, resolvers and refusals for the guarded fetch's tests. */

export interface Seen {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface TestServer {
  readonly port: number;
  readonly origin: string;
  readonly seen: Seen[];
  connections: number;
}

export type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

export const servers: (http.Server | https.Server)[] = [];

/** Closes every server a test started. */
export async function closeServers(): Promise<void> {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
}

/** A server on 127.0.0.1 that records every request it is sent and every connection it takes. */
export async function serve(handler: Handler): Promise<TestServer> {
  const state = { port: 0, origin: '', seen: [] as Seen[], connections: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      state.seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', () => {
    state.connections += 1;
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.port = (server.address() as AddressInfo).port;
  state.origin = `http://127.0.0.1:${state.port}`;
  return state;
}

export function ok(text = 'ok'): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(text);
  };
}

export function redirect(status: number, location: string): Handler {
  return (_req, res) => {
    res.writeHead(status, { location }).end('moved');
  };
}

/** An injected resolver: each name maps to its addresses; unknown names have none. */
export function resolver(table: Record<string, readonly string[]>) {
  return vi.fn(async (hostname: string): Promise<ResolvedAddress[]> =>
    (table[hostname] ?? []).map((address) => ({
      address,
      family: address.includes(':') ? 6 : 4,
    })),
  );
}

export async function refusal(promise: Promise<unknown>): Promise<EgressRefusedError> {
  try {
    await promise;
  } catch (error) {
    expect(hasCode(error, EgressRefusedError.code)).toBe(true);
    expect(error).toBeInstanceOf(EgressRefusedError);
    return error as EgressRefusedError;
  }
  throw new Error('expected a refusal');
}

/** A self-signed certificate for mcp.test, for tests only: no client trusts it. */
export const TEST_TLS = {
  key: `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgVYjRJPVYa0pfZ1Xw
mzwoMOcztTr+4Jwp5oezizEoKkChRANCAASrKFZYav+0bCNkrA7LYxsKcXOIXXdt
BbwFgNW8ksnCDyKVezoBW+g41GkVQuVZb0MqZ2RGycPZnagChkKPBG/T
-----END PRIVATE KEY-----`,
  cert: `-----BEGIN CERTIFICATE-----
MIIBkzCCATigAwIBAgIULDwpA1TZh5dPGpKm/KmpC69sIrYwCgYIKoZIzj0EAwIw
EzERMA8GA1UEAwwIbWNwLnRlc3QwIBcNMjYxMjAyMTQyMjI2WhgPMjEyNjExMDgx
NDIyMjZaMBMxETAPBgNVBAMMCG1jcC50ZXN0MFkwEwYHKoZIzj0CAQYIKoZIzj0D
AQcDQgAEqyhWWGr/tGwjZKwOy2MbCnFziF13bQW8BYDVvJLJwg8ilXs6AVvoONRp
FULlWW9DKmdkRsnD2Z2oAoZCjwRv06NoMGYwHQYDVR0OBBYEFB8pQqoW/KO7pwBO
H3JzG8LwlH8iMB8GA1UdIwQYMBaAFB8pQqoW/KO7pwBOH3JzG8LwlH8iMA8GA1Ud
EwEB/wQFMAMBAf8wEwYDVR0RBAwwCoIIbWNwLnRlc3QwCgYIKoZIzj0EAwIDSQAw
RgIhAImc/GElyPetydzVgpc2eM1dbz3H8HTfW9//IZZO8tOxAiEAtwGmLWaNmg0r
JtbBN5GnkkFmXtTezPLBlwT50t+30vw=
-----END CERTIFICATE-----`,
};

export function readerOf(res: Response): ReadableStreamDefaultReader<Uint8Array> {
  const body = res.body as ReadableStream<Uint8Array> | null;
  if (!body) throw new Error('expected a body');
  return body.getReader();
}

export const PLAIN_HTTP = 'plain http is allowed only to loopback with the development setting on';
