import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { turnPolicy } from '../../src/app/packages/policy.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { freshPglite } from '../support/db.ts';
import { signIn, startTestServer, type TestServer } from '../support/server.ts';

const KEY = 'exa-secret-key-0123456789abcdef';

/*
 * The operator API of the query providers: register with a write-only key, set a ceiling, grant,
 * list, revoke; refusals name the field and never echo the key; the web verbs are offered exactly
 * when a granted provider can serve them, and withheld with the reason otherwise.
 */
describe('the web providers API', () => {
  let server: TestServer;
  const agentId = randomUUID();

  beforeAll(async () => {
    server = await startTestServer(await freshPglite());
    await insertAgent(server.mesh.db, { id: agentId, name: 'scout' });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  const offered = async () => {
    const policy = await turnPolicy(server.mesh, agentId, 'direct');
    return {
      names: policy.registry.names(),
      withheld: Object.fromEntries(policy.withheld.map((w) => [w.name, w.reason])),
    };
  };

  it('refuses bad registrations by name, never echoing the key', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ name: 'x', kind: 'bing', api_key: KEY }, /kind/],
      [{ name: 'Bad Name', kind: 'exa', api_key: KEY }, /name/],
      [{ name: 'x', kind: 'exa', api_key: KEY, base_url: 'http://search.example.com' }, /https/],
      [{ name: 'x', kind: 'exa', api_key: KEY, base_url: 'http://127.0.0.1:9' }, /https/],
      [
        { name: 'x', kind: 'exa', api_key: KEY, base_url: 'https://u:p@gw.example.com' },
        /credentials/,
      ],
      [{ name: 'x', kind: 'exa', api_key: KEY, max_calls_per_run: 0 }, /max_calls_per_run/],
      [{ name: 'x', kind: 'cloudflare', api_key: KEY }, /account id/],
      [{ name: 'x', kind: 'cloudflare', api_key: KEY, account_id: 'nope' }, /account id/],
      [{ name: 'x', kind: 'exa' }, /api_key/],
      // Addresses the control plane must not be pointed at: loopback without the development
      // setting, link-local (cloud metadata), private.
      [
        { name: 'x', kind: 'exa', api_key: KEY, base_url: 'https://127.0.0.1:8443' },
        /refused .*loopback/,
      ],
      [
        { name: 'x', kind: 'exa', api_key: KEY, base_url: 'https://169.254.169.254' },
        /refused .*link-local/,
      ],
      [
        { name: 'x', kind: 'exa', api_key: KEY, base_url: 'https://10.1.2.3/exa' },
        /refused .*private/,
      ],
      [
        { name: 'x', kind: 'exa', api_key: KEY, base_url: 'https://[fd00::1]' },
        /refused .*unique-local/,
      ],
      [
        {
          name: 'x',
          kind: 'exa',
          api_key: KEY,
          base_url: 'https://10.1.2.3',
          allow_loopback_http: true,
        },
        /refused .*private/,
      ],
    ];
    for (const [body, reason] of cases) {
      const refused = await server.api('POST', '/api/web/providers', body);
      expect(refused.status, JSON.stringify({ ...body, api_key: '…' })).toBe(400);
      expect(refused.text).toMatch(reason);
      expect(refused.text).not.toContain(KEY);
    }
    expect((await server.api('GET', '/api/web')).json).toEqual({ providers: [], grants: [] });
  });

  it('withholds the web verbs until a provider that can serve each is granted', async () => {
    const before = await offered();
    expect(before.names).not.toContain('web_search');
    expect(before.withheld['web_search']).toMatch(
      /search provider; none is granted.*mesh web grant/,
    );
    expect(before.withheld['web_read']).toMatch(/reading provider/);

    const added = await server.api('POST', '/api/web/providers', {
      name: 'brave',
      kind: 'brave',
      api_key: KEY,
      max_calls_per_run: 3,
    });
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({ name: 'brave', base_url: 'https://api.search.brave.com' });
    expect((await server.api('PUT', '/api/agents/scout/web-providers/brave')).status).toBe(200);
    const searchOnly = await offered();
    expect(searchOnly.names).toContain('web_search');
    expect(searchOnly.names).not.toContain('web_read');
    expect(searchOnly.withheld['web_read']).toMatch(/reading provider/);

    const reader = await server.api('POST', '/api/web/providers', {
      name: 'cf',
      kind: 'cloudflare',
      api_key: KEY,
      account_id: '0123456789abcdef0123456789abcdef',
      base_url: 'http://127.0.0.1:9/gw',
      allow_loopback_http: true,
    });
    expect(reader.status).toBe(201);
    expect((await server.api('PUT', '/api/agents/scout/web-providers/cf')).status).toBe(200);
    expect((await offered()).names).toEqual(expect.arrayContaining(['web_search', 'web_read']));

    const ceiling = await server.api('PUT', '/api/web/providers/brave/ceiling', {
      max_calls_per_run: 7,
    });
    expect(ceiling.json).toEqual({ name: 'brave', max_calls_per_run: 7 });
    const listed = await server.api('GET', '/api/web');
    expect(listed.text).not.toContain(KEY);
    expect(listed.json).toMatchObject({
      providers: [
        { name: 'brave', kind: 'brave', serves: ['web_search'], max_calls_per_run: 7 },
        {
          name: 'cf',
          kind: 'cloudflare',
          serves: ['web_read'],
          base_url: 'http://127.0.0.1:9/gw',
          allow_loopback_http: true,
          api_key: { present: true },
        },
      ],
      grants: [
        { agent: 'scout', provider: 'brave' },
        { agent: 'scout', provider: 'cf' },
      ],
    });
    // A web provider is no MCP server: the MCP listing does not show it.
    expect((await server.api('GET', '/api/mcp/providers')).text).not.toContain('"cf"');

    const revoked = await server.api('DELETE', '/api/agents/scout/web-providers/cf');
    expect([revoked.status, revoked.json]).toEqual([
      200,
      { agent: 'scout', provider: 'cf', revoked: true },
    ]);
    // Revoking again is no error: the answer says nothing was granted.
    expect((await server.api('DELETE', '/api/agents/scout/web-providers/cf')).json).toEqual({
      agent: 'scout',
      provider: 'cf',
      revoked: false,
    });
    expect((await offered()).names).not.toContain('web_read');
    expect((await server.api('DELETE', '/api/web/providers/cf')).status).toBe(204);
    expect((await server.api('DELETE', '/api/web/providers/cf')).status).toBe(404);
    expect((await server.api('PUT', '/api/agents/scout/web-providers/nope')).status).toBe(404);
  });

  it('shows providers and grants on the UI page, and grants from its form', async () => {
    const { cookie, csrf } = await signIn(server);
    await insertAgent(server.mesh.db, { id: randomUUID(), name: 'scout2' });
    const posted = await fetch(`${server.url}web/grants`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf, agent: 'scout2', provider: 'brave' }).toString(),
    });
    expect(posted.status).toBe(303);
    const page = await (await fetch(`${server.url}web`, { headers: { cookie } })).text();
    expect(page).toContain('<h1>Web search and reading</h1>');
    expect(page).toMatch(/data-web-provider="brave"[\s\S]*web_search/);
    expect(page).toContain('data-web-grant="scout2:brave"');
    expect(page).not.toContain(KEY);
  });
});
