import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uiRoutes } from '../../src/server/ui/routes.ts';
import { freshPglite } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** A concrete path for a UI route template. */
function concrete(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'run' ? '00000000-0000-4000-8000-000000000000' : `some-${name}`,
  );
}

describe('the web UI’s protection, route by route', () => {
  let server: TestServer;
  let cookie: string;
  let csrf: string;

  beforeAll(async () => {
    server = await startTestServer(await freshPglite());
    const login = await fetch(`${server.url}login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: server.token }).toString(),
    });
    cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await (await fetch(`${server.url}agents`, { headers: { cookie } })).text();
    csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
    expect(csrf).not.toBe('');
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await server?.mesh.db.close();
  });

  const post = (path: string, headers: Record<string, string>, form: Record<string, string>) =>
    fetch(`${server.url}${path.slice(1)}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams(form).toString(),
    });

  it('sends every page to the login without a session, and refuses every form post', async () => {
    expect(uiRoutes.length).toBeGreaterThanOrEqual(25);
    for (const route of uiRoutes) {
      const path = concrete(route.path);
      if (route.method === 'GET') {
        const res = await fetch(`${server.url}${path.slice(1)}`, { redirect: 'manual' });
        expect(res.status, path).toBe(303);
        expect(res.headers.get('location'), path).toBe('/login');
        continue;
      }
      expect((await post(path, {}, { csrf })).status, `${path} without a session`).toBe(401);
      expect((await post(path, { cookie }, {})).status, `${path} without csrf`).toBe(403);
      expect(
        (await post(path, { cookie }, { csrf: `${csrf}x` })).status,
        `${path} with a wrong csrf`,
      ).toBe(403);
      expect(
        (await post(path, { cookie, origin: 'http://evil.example' }, { csrf })).status,
        `${path} from another origin`,
      ).toBe(403);
      expect(
        (await post(path, { cookie, 'sec-fetch-site': 'cross-site' }, { csrf })).status,
        `${path} cross-site`,
      ).toBe(403);
    }
  });

  it('refuses a stale session after logout, and an oversized form', async () => {
    const big = await post('/agents', { cookie }, { csrf, persona: 'x'.repeat(300 * 1024) });
    expect(big.status).toBe(413);
    expect((await post('/logout', { cookie }, { csrf })).status).toBe(303);
    const after = await fetch(`${server.url}agents`, { headers: { cookie }, redirect: 'manual' });
    expect(after.headers.get('location')).toBe('/login');
  });
});
