import { afterEach, describe, expect, it, vi } from 'vitest';
import { createGuardedFetch } from './guarded-fetch.ts';
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
