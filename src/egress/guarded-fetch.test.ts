import https from 'node:https';
import type { AddressInfo } from 'node:net';
import tls from 'node:tls';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { hasCode } from '../tool/errors.ts';
import { createGuardedFetch, EgressRefusedError, type ResolvedAddress } from './guarded-fetch.ts';
import {
  closeServers,
  ok,
  PLAIN_HTTP,
  redirect,
  refusal,
  resolver,
  serve,
  servers,
  TEST_TLS,
} from '../../test/support/egress-servers.ts';

afterEach(closeServers);

describe('scheme and credentials', () => {
  it('refuses plain http to a public host, other schemes and credentials, before resolving', async () => {
    const resolve = resolver({ 'example.com': ['93.184.216.34'] });
    const fetch = createGuardedFetch({ resolve });
    const http1 = await refusal(fetch('http://example.com/x?token=canary-1'));
    expect(http1.message).toBe(`refused http://example.com/: ${PLAIN_HTTP}`);
    for (const url of ['ftp://example.com/', 'file:///etc/passwd', 'data:text/plain,canary-2']) {
      const error = await refusal(fetch(url));
      expect(error.message).toContain('is not allowed (https only)');
      expect(error.message).not.toContain('canary');
    }
    const credentials = await refusal(fetch('https://user:canary-3@example.com/?q=canary-4'));
    expect(credentials.message).toBe(
      'refused https://example.com/: credentials in the URL are not allowed',
    );
    expect(resolve).not.toHaveBeenCalled();
  });

  it('refuses plain http to a public host even with the development setting on', async () => {
    const resolve = resolver({ 'example.com': ['93.184.216.34'] });
    const fetch = createGuardedFetch({ resolve, allowLoopbackHttp: true });
    const error = await refusal(fetch('http://example.com/?token=canary-5'));
    expect(error.message).toBe(`refused http://example.com/: ${PLAIN_HTTP}`);
  });
});

describe('loopback', () => {
  it('reaches a loopback server over http with the development setting on', async () => {
    const server = await serve(ok('hello'));
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const res = await fetch(`${server.origin}/hello?x=1`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('hello');
    expect(server.seen[0]?.url).toBe('/hello?x=1');
  });

  it('refuses loopback without the development setting, before connecting', async () => {
    const server = await serve(ok());
    const fetch = createGuardedFetch({ resolve: resolver({ 'mcp.test': ['127.0.0.1'] }) });
    const plain = await refusal(fetch(`${server.origin}/`));
    expect(plain.message).toBe(`refused ${server.origin}/: ${PLAIN_HTTP}`);
    const literal = await refusal(fetch(`https://127.0.0.1:${server.port}/`));
    expect(literal.message).toBe(
      'refused 127.0.0.1: loopback address (allowed only with the development setting on)',
    );
    const named = await refusal(fetch(`https://mcp.test:${server.port}/`));
    expect(named.message).toMatch(/^refused mcp\.test \(127\.0\.0\.1\): loopback address/);
    await refusal(fetch(`https://[::1]:${server.port}/`));
    await refusal(fetch(`https://[::ffff:127.0.0.1]:${server.port}/`));
    expect(server.connections).toBe(0);
  });
});

describe('DNS pinning', () => {
  it('refuses a name that resolves to the metadata address or a private one', async () => {
    const resolve = resolver({
      'metadata.test': ['169.254.169.254'],
      'internal.test': ['10.0.0.5'],
    });
    const fetch = createGuardedFetch({ resolve, allowLoopbackHttp: true });
    const metadata = await refusal(fetch('https://metadata.test/latest/meta-data?x=canary-6'));
    expect(metadata.message).toBe('refused metadata.test (169.254.169.254): link-local address');
    const internal = await refusal(fetch('https://internal.test/'));
    expect(internal.message).toBe('refused internal.test (10.0.0.5): private address');
    const literal = await refusal(fetch('https://169.254.169.254/latest/meta-data'));
    expect(literal.message).toBe('refused 169.254.169.254: link-local address');
  });

  it('refuses an answer mixing allowed and private addresses, before any connection', async () => {
    const server = await serve(ok());
    const resolve = resolver({
      'mixed.test': ['127.0.0.1', '10.0.0.5'],
      'public-mixed.test': ['93.184.216.34', '192.168.1.20'],
    });
    const fetch = createGuardedFetch({ resolve, allowLoopbackHttp: true });
    const mixed = await refusal(fetch(`http://mixed.test:${server.port}/`));
    expect(mixed.message).toBe('refused mixed.test (10.0.0.5): private address');
    const publicMixed = await refusal(fetch('https://public-mixed.test/'));
    expect(publicMixed.message).toBe('refused public-mixed.test (192.168.1.20): private address');
    expect(server.connections).toBe(0);
  });

  it('connects to the resolved address with the hostname in Host, resolving once per instance', async () => {
    const server = await serve(ok());
    const resolve = resolver({ 'mcp.test': ['127.0.0.1'] });
    const fetch = createGuardedFetch({ resolve, allowLoopbackHttp: true });
    const url = `http://mcp.test:${server.port}/mcp`;
    await (await fetch(url)).text();
    await Promise.all([1, 2, 3].map(async () => (await fetch(url, { method: 'POST' })).text()));
    await (await fetch(new URL(url))).text();
    expect(resolve).toHaveBeenCalledTimes(1);
    expect(resolve).toHaveBeenCalledWith('mcp.test');
    expect(server.seen).toHaveLength(5);
    expect(server.seen.every((s) => s.headers.host === `mcp.test:${server.port}`)).toBe(true);

    const other = createGuardedFetch({ resolve, allowLoopbackHttp: true });
    await (await other(url)).text();
    expect(resolve).toHaveBeenCalledTimes(2);
  });

  it('verifies TLS against the hostname while connecting to the pinned address', async () => {
    const names: string[] = [];
    const server = https.createServer({
      ...TEST_TLS,
      SNICallback: (servername, callback) => {
        names.push(servername);
        callback(null, tls.createSecureContext(TEST_TLS));
      },
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const fetch = createGuardedFetch({
      resolve: resolver({ 'mcp.test': ['127.0.0.1'] }),
      allowLoopbackHttp: true,
    });
    const error: unknown = await fetch(`https://mcp.test:${port}/`).then(
      () => undefined,
      (e: unknown) => e,
    );
    // The certificate is checked (and refused: nothing trusts it), and SNI named the host.
    expect(error).toMatchObject({ code: expect.stringMatching(/CERT|SELF_SIGNED/) as unknown });
    expect(hasCode(error, EgressRefusedError.code)).toBe(false);
    expect(names).toEqual(['mcp.test']);
  });

  it('resolves again after a failed lookup, which pinned nothing', async () => {
    const server = await serve(ok());
    let calls = 0;
    const resolve = vi.fn(async (): Promise<ResolvedAddress[]> => {
      calls += 1;
      if (calls === 1) throw new Error('temporary DNS failure');
      return [{ address: '127.0.0.1', family: 4 }];
    });
    const fetch = createGuardedFetch({ resolve, allowLoopbackHttp: true });
    const url = `http://mcp.test:${server.port}/`;
    await expect(fetch(url)).rejects.toThrow('temporary DNS failure');
    expect((await fetch(url)).status).toBe(200);
    expect((await fetch(url)).status).toBe(200);
    expect(resolve).toHaveBeenCalledTimes(2);
  });
});

describe('redirects', () => {
  it('refuses a redirect to the metadata address on the hop', async () => {
    const server = await serve(redirect(302, 'http://169.254.169.254/latest/meta-data?x=canary-7'));
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const error = await refusal(fetch(`${server.origin}/start`));
    expect(error.message).toBe('refused 169.254.169.254: link-local address');
    expect(server.seen).toHaveLength(1);
  });

  it('refuses a redirect to a name that resolves to a private address', async () => {
    const server = await serve(redirect(307, 'https://internal.test/admin'));
    const resolve = resolver({ 'mcp.test': ['127.0.0.1'], 'internal.test': ['10.1.2.3'] });
    const fetch = createGuardedFetch({ resolve, allowLoopbackHttp: true });
    const error = await refusal(fetch(`http://mcp.test:${server.port}/`));
    expect(error.message).toBe('refused internal.test (10.1.2.3): private address');
  });

  it('keeps method and body on 307 and 308', async () => {
    const target = await serve(ok('done'));
    for (const status of [307, 308]) {
      const server = await serve(redirect(status, `${target.origin}/target`));
      const fetch = createGuardedFetch({ allowLoopbackHttp: true });
      const res = await fetch(`${server.origin}/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      expect(res.status).toBe(200);
      expect(res.redirected).toBe(true);
      expect(res.url).toBe(`${target.origin}/target`);
      expect(await res.text()).toBe('done');
    }
    expect(target.seen.map((s) => [s.method, s.body, s.headers['content-type']])).toEqual([
      ['POST', '{"a":1}', 'application/json'],
      ['POST', '{"a":1}', 'application/json'],
    ]);
  });

  it('turns a POST into a GET without body on 303, 302 and 301', async () => {
    const target = await serve(ok());
    for (const status of [303, 302, 301]) {
      const server = await serve(redirect(status, `${target.origin}/target-${status}`));
      const fetch = createGuardedFetch({ allowLoopbackHttp: true });
      const res = await fetch(`${server.origin}/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"a":1}',
      });
      expect(res.status).toBe(200);
    }
    expect(target.seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['GET', '/target-303', ''],
      ['GET', '/target-302', ''],
      ['GET', '/target-301', ''],
    ]);
    expect(target.seen.every((s) => s.headers['content-type'] === undefined)).toBe(true);
    expect(target.seen.every((s) => s.headers['content-length'] === undefined)).toBe(true);
  });

  it('keeps a GET a GET on 301', async () => {
    let hops = 0;
    const server = await serve((_req, res) => {
      hops += 1;
      if (hops === 1) res.writeHead(301, { location: '/next' }).end();
      else res.writeHead(200).end('there');
    });
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    expect(await (await fetch(`${server.origin}/`)).text()).toBe('there');
    expect(server.seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/'],
      ['GET', '/next'],
    ]);
  });

  it('keeps HEAD a HEAD on 303', async () => {
    let hops = 0;
    const server = await serve((_req, res) => {
      hops += 1;
      if (hops === 1) res.writeHead(303, { location: '/next' }).end();
      else res.writeHead(200, { 'content-length': '5' }).end();
    });
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const res = await fetch(`${server.origin}/`, { method: 'HEAD' });
    expect(res.body).toBeNull();
    expect(server.seen.map((s) => s.method)).toEqual(['HEAD', 'HEAD']);
  });

  it('drops Authorization when a redirect leaves the origin and keeps it within', async () => {
    const other = await serve(ok());
    let hops = 0;
    const server = await serve((_req, res) => {
      hops += 1;
      const location = hops === 1 ? '/same' : `${other.origin}/other`;
      res.writeHead(302, { location }).end();
    });
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const headers = new Headers({ authorization: 'Bearer canary-8', 'x-trace': 't1' });
    const res = await fetch(`${server.origin}/start`, { headers });
    expect(res.status).toBe(200);
    expect(server.seen.map((s) => s.headers.authorization)).toEqual([
      'Bearer canary-8',
      'Bearer canary-8',
    ]);
    expect(other.seen[0]?.headers.authorization).toBeUndefined();
    expect(other.seen[0]?.headers['x-trace']).toBe('t1');
  });

  it('returns the redirect as is in manual mode and throws in error mode', async () => {
    const server = await serve(redirect(302, '/elsewhere'));
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const manual = await fetch(`${server.origin}/`, { redirect: 'manual' });
    expect(manual.status).toBe(302);
    expect(manual.headers.get('location')).toBe('/elsewhere');
    expect(await manual.text()).toBe('moved');
    await expect(fetch(`${server.origin}/`, { redirect: 'error' })).rejects.toThrow(TypeError);
    expect(server.seen).toHaveLength(2);
  });

  it('gives up after five redirects', async () => {
    const server = await serve((req, res) => {
      res.writeHead(302, { location: `${req.url ?? ''}x` }).end();
    });
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    await expect(fetch(`${server.origin}/`)).rejects.toThrow(/too many redirects/);
    expect(server.seen).toHaveLength(6);
  });
});
