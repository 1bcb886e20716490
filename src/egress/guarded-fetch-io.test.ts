import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGuardedFetch, EgressPools } from './guarded-fetch.ts';
import { closeServers, ok, readerOf, serve } from '../../test/support/egress-servers.ts';

afterEach(closeServers);

describe('requests and responses', () => {
  it('sends method, headers in every form and every body kind', async () => {
    const server = await serve(ok());
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const url = `${server.origin}/`;
    await fetch(url, { method: 'put', headers: [['x-a', '1']], body: new Uint8Array([104, 105]) });
    await fetch(url, { method: 'POST', headers: { 'x-b': '2' }, body: Buffer.from('buf') });
    await fetch(url, {
      method: 'POST',
      headers: new Headers({ accept: 'application/json' }),
      body: new URLSearchParams({ grant_type: 'authorization_code', code: 'a b' }),
    });
    await fetch(url, { method: 'POST', body: 'text' });
    await fetch(url, { method: 'POST' });
    const seen = server.seen;
    expect(seen.map((s) => [s.method, s.body])).toEqual([
      ['PUT', 'hi'],
      ['POST', 'buf'],
      ['POST', 'grant_type=authorization_code&code=a+b'],
      ['POST', 'text'],
      ['POST', ''],
    ]);
    expect(seen[0]?.headers['x-a']).toBe('1');
    expect(seen[1]?.headers['x-b']).toBe('2');
    expect(seen[2]?.headers.accept).toBe('application/json');
    expect(seen[2]?.headers['content-type']).toBe(
      'application/x-www-form-urlencoded;charset=UTF-8',
    );
    expect(seen[3]?.headers['content-type']).toBe('text/plain;charset=UTF-8');
    expect(seen[4]?.headers['content-length']).toBe('0');
    await expect(fetch(url, { body: 'x' })).rejects.toThrow(TypeError);
  });

  it('returns status, status text, headers and a null body where there is none', async () => {
    const server = await serve((req, res) => {
      if (req.url === '/empty') {
        res.writeHead(204).end();
        return;
      }
      res.statusMessage = 'Made It';
      res.setHeader('set-cookie', ['a=1; Path=/', 'b=2; Path=/']);
      res.setHeader('x-multi', ['one', 'two']);
      res.writeHead(201, { 'content-type': 'application/json' }).end('{"id":7}');
    });
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const res = await fetch(`${server.origin}/made`);
    expect(res.status).toBe(201);
    expect(res.ok).toBe(true);
    expect(res.statusText).toBe('Made It');
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.getSetCookie()).toEqual(['a=1; Path=/', 'b=2; Path=/']);
    expect(res.headers.get('x-multi')).toBe('one, two');
    expect(res.url).toBe(`${server.origin}/made`);
    expect(res.redirected).toBe(false);
    expect(await res.json()).toEqual({ id: 7 });
    const empty = await fetch(`${server.origin}/empty`);
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
  });

  it('streams a response body as the server writes it', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
      void released.then(() => {
        setTimeout(() => res.end('data: two\n\n'), 20);
      });
    });
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const res = await fetch(`${server.origin}/sse`, { headers: { accept: 'text/event-stream' } });
    const reader = readerOf(res);
    const decoder = new TextDecoder();
    const first = await reader.read();
    // The second chunk is written only once the first was read: the body is not buffered.
    expect(decoder.decode(first.value)).toBe('data: one\n\n');
    release();
    let rest = '';
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += decoder.decode(chunk.value);
    }
    expect(rest).toBe('data: two\n\n');
  });
});

describe('abort and timeout', () => {
  it('rejects when the caller aborts before the response', async () => {
    const server = await serve(() => {
      // never answers
    });
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const controller = new AbortController();
    const pending = fetch(`${server.origin}/`, { signal: controller.signal });
    await vi.waitFor(() => expect(server.seen).toHaveLength(1));
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });

    const reason = new Error('stop now');
    const second = new AbortController();
    const again = fetch(`${server.origin}/`, { signal: second.signal });
    second.abort(reason);
    await expect(again).rejects.toBe(reason);

    await expect(fetch(`${server.origin}/`, { signal: AbortSignal.abort() })).rejects.toMatchObject(
      { name: 'AbortError' },
    );
  });

  it('errors the body stream when the caller aborts while it streams', async () => {
    const server = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: one\n\n');
    });
    const fetch = createGuardedFetch({ allowLoopbackHttp: true });
    const controller = new AbortController();
    const res = await fetch(`${server.origin}/`, { signal: controller.signal });
    const reader = readerOf(res);
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('times out when no response comes in time', async () => {
    const server = await serve(() => {
      // never answers
    });
    const fetch = createGuardedFetch({ allowLoopbackHttp: true, timeoutMs: 100 });
    await expect(fetch(`${server.origin}/`)).rejects.toMatchObject({ name: 'TimeoutError' });
  });
});

describe('a kept-alive socket the server closed as it was reused', () => {
  /**
   * A server that answers the first request of each connection and drops the connection when a
   * second one arrives on it: the race of a server's idle timeout with a client's reuse, every time.
   */
  async function droppingSecond() {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      const socket = req.socket as Socket & { served?: number };
      socket.served = (socket.served ?? 0) + 1;
      seen.push(`${req.method ?? ''} ${String(socket.served)}`);
      if (socket.served > 1) {
        socket.destroy();
        return;
      }
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/`,
      seen,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  it('asks a safe request again on another connection, once', async () => {
    const server = await droppingSecond();
    try {
      const fetch = createGuardedFetch({ allowLoopbackHttp: true });
      expect(await (await fetch(server.url)).text()).toBe('ok');
      // Reused, dropped, then sent again on a new connection.
      expect(await (await fetch(server.url)).text()).toBe('ok');
      expect(server.seen).toEqual(['GET 1', 'GET 2', 'GET 1']);
    } finally {
      await server.close();
    }
  });

  it('never sends a request that may change something twice: the reset is the answer', async () => {
    const server = await droppingSecond();
    try {
      const fetch = createGuardedFetch({ allowLoopbackHttp: true });
      expect(await (await fetch(server.url, { method: 'POST', body: 'one' })).text()).toBe('ok');
      await expect(fetch(server.url, { method: 'POST', body: 'two' })).rejects.toThrow();
      expect(server.seen).toEqual(['POST 1', 'POST 2']);
    } finally {
      await server.close();
    }
  });
});

describe('pooled connections', () => {
  /** A server that answers every request and counts the connections they came on. */
  async function counting() {
    let connections = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok'));
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
      url: `http://127.0.0.1:${port}/`,
      connections: () => connections,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    };
  }

  it('are shared by the guarded fetches made with one pool and policy, one after another', async () => {
    const server = await counting();
    const pools = new EgressPools();
    try {
      for (let i = 0; i < 3; i++) {
        const fetch = createGuardedFetch({ allowLoopbackHttp: true, pools });
        expect(await (await fetch(server.url, { method: 'POST', body: `${i}` })).text()).toBe('ok');
      }
      expect(server.connections()).toBe(1);
      // Without the pool, a fetch has connections of its own.
      await createGuardedFetch({ allowLoopbackHttp: true })(server.url);
      expect(server.connections()).toBe(2);
      // Closed, the pool ends its connections; a fetch made with it after opens its own.
      pools.close();
      await createGuardedFetch({ allowLoopbackHttp: true, pools })(server.url);
      expect(server.connections()).toBe(3);
    } finally {
      pools.close();
      await server.close();
    }
  });

  it('are a fetch of its own when it resolves names its own way', async () => {
    const server = await counting();
    try {
      const resolve = () => Promise.resolve([{ address: '127.0.0.1', family: 4 as const }]);
      const pools = new EgressPools();
      for (let i = 0; i < 2; i++) {
        const fetch = createGuardedFetch({ allowLoopbackHttp: true, resolve, pools });
        expect(await (await fetch(server.url)).text()).toBe('ok');
      }
      expect(server.connections()).toBe(2);
    } finally {
      await server.close();
    }
  });
});
