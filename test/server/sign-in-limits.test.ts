import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trustedProxies } from '../../src/server/client-address.ts';
import { DEFAULT_FAILURE_LIMIT } from '../../src/server/failure-limit.ts';
import { meshApp } from '../../src/server/server.ts';
import { manualClock } from '../../src/tool/clock.ts';
import { testDatabases } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

const WRONG = `mesh_op_${'A'.repeat(43)}`;

/**
 * The session cookie is `Secure` when the browser's request was https, directly or as a trusted
 * proxy says; failed logins and API tokens are limited per client address (429, Retry-After), the
 * address read through trusted proxies only.
 */
describe.each(testDatabases())('sign-in hardening on $name', (database) => {
  let server: TestServer;
  let dispose: () => Promise<void>;
  const clock = manualClock(new Date());

  beforeAll(async () => {
    const opened = await database.open();
    // The loopback is trusted as a proxy, so a test can speak for clients at other addresses.
    server = await startTestServer(opened.db, {
      clock,
      failureLimit: DEFAULT_FAILURE_LIMIT,
      trustedProxies: trustedProxies(['127.0.0.1', '::1']),
    });
    dispose = () => opened.dispose();
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await dispose?.();
  });

  const login = (token: string, headers: Record<string, string> = {}) =>
    fetch(`${server.url}login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ token }).toString(),
    });
  const from = (address: string) => ({ 'x-forwarded-for': address });

  it('marks the session cookie Secure over https, directly or through a trusted proxy', async () => {
    const plain = await login(server.token, from('192.0.2.1'));
    expect(plain.status).toBe(303);
    expect(plain.headers.get('set-cookie')).toMatch(/^mesh_session=/);
    expect(plain.headers.get('set-cookie')).not.toMatch(/;\s*Secure/i);

    const proxied = await login(server.token, {
      ...from('192.0.2.1'),
      'x-forwarded-proto': 'https',
    });
    expect(proxied.headers.get('set-cookie')).toMatch(/;\s*Secure/i);

    // https straight to this server (no proxy in between).
    const direct = await meshApp(server.mesh, { log: () => {}, version: 't' }).request(
      'https://mesh.test/login',
      {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ token: server.token }).toString(),
      },
    );
    expect(direct.status).toBe(303);
    expect(direct.headers.get('set-cookie')).toMatch(/;\s*Secure/i);
  });

  it('believes X-Forwarded-Proto and X-Forwarded-For only from a trusted proxy', async () => {
    // An app that trusts no proxy: the forwarding headers are the client's own claims.
    const app = meshApp(server.mesh, { log: () => {}, version: 't' });
    const res = await app.request('http://mesh.test/login', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-proto': 'https',
      },
      body: new URLSearchParams({ token: server.token }).toString(),
    });
    expect(res.status).toBe(303);
    expect(res.headers.get('set-cookie')).not.toMatch(/;\s*Secure/i);
    const guess = (i: number) =>
      app.request('http://mesh.test/api/agents', {
        headers: { authorization: `Bearer ${WRONG}`, 'x-forwarded-for': `192.0.2.${i}` },
      });
    for (let i = 0; i < DEFAULT_FAILURE_LIMIT.failures; i++)
      expect((await guess(i)).status).toBe(401);
    expect((await guess(99)).status).toBe(429);
  });

  it('limits failed API tokens per client address with 429 and Retry-After', async () => {
    const client = from('198.51.100.7');
    for (let i = 0; i < DEFAULT_FAILURE_LIMIT.failures; i++) {
      const res = await server.api('GET', '/api/agents', undefined, {
        token: WRONG,
        headers: client,
      });
      expect(res.status, `failure ${i + 1}`).toBe(401);
    }
    const limited = await server.api('GET', '/api/agents', undefined, {
      token: WRONG,
      headers: client,
    });
    expect(limited.status).toBe(429);
    expect(limited.json).toMatchObject({ error: { code: 'rate_limited' } });
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.text).not.toContain(WRONG);
    // While limited, even the right token is refused: a guess must not be told apart.
    const right = await server.api('GET', '/api/agents', undefined, { headers: client });
    expect(right.status).toBe(429);
    // Another client is not held back by this one.
    const other = await server.api('GET', '/api/agents', undefined, {
      headers: from('203.0.113.9'),
    });
    expect(other.status).toBe(200);
    // A request without any token guesses nothing and is not limited: it is told to sign in.
    expect(
      (await server.api('GET', '/api/agents', undefined, { token: null, headers: client })).status,
    ).toBe(401);
    // Time given back by the clock, not slept: after Retry-After, one more attempt is allowed.
    clock.advance(Number(limited.headers.get('retry-after')) * 1000);
    expect((await server.api('GET', '/api/agents', undefined, { headers: client })).status).toBe(
      200,
    );
    const again = await server.api('GET', '/api/agents', undefined, {
      token: WRONG,
      headers: client,
    });
    expect(again.status).toBe(401);
    const stillLimited = await server.api('GET', '/api/agents', undefined, { headers: client });
    expect(stillLimited.status).toBe(429);
  });

  it('limits failed logins the same way, counted with the API token failures', async () => {
    const client = from('198.51.100.20');
    for (let i = 0; i < DEFAULT_FAILURE_LIMIT.failures - 1; i++) {
      expect((await login('not a token', client)).status, `failure ${i + 1}`).toBe(401);
    }
    const api = await server.api('GET', '/api/agents', undefined, {
      token: WRONG,
      headers: client,
    });
    expect(api.status).toBe(401);
    const limited = await login(server.token, client);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.headers.get('set-cookie')).toBeNull();
    expect(await limited.text()).toContain('too many failed sign-ins');
  });

  it('reads the client address only through trusted proxies', async () => {
    // Behind the trusted loopback, a client that forges X-Forwarded-For to the left of what the
    // proxy appended is still counted at the proxy's word (the rightmost untrusted address).
    const forged = { 'x-forwarded-for': '10.9.9.9, 198.51.100.33' };
    for (let i = 0; i < DEFAULT_FAILURE_LIMIT.failures; i++)
      await server.api('GET', '/api/agents', undefined, { token: WRONG, headers: forged });
    const sameClient = await server.api('GET', '/api/agents', undefined, {
      headers: { 'x-forwarded-for': '10.1.1.1, 198.51.100.33' },
    });
    expect(sameClient.status).toBe(429);
  });
});
