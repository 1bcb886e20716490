import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOAuth, type FakeOAuth } from '../support/fake-oauth.ts';
import { freshPglite } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/** Plays the operator's browser at the authorization server, which approves at once. */
async function approve(authorizationUrl: string): Promise<URL> {
  const response = await fetch(authorizationUrl, { redirect: 'manual' });
  expect(response.status).toBe(302);
  return new URL(response.headers.get('location') ?? '');
}

describe('connecting an agent to a remote MCP server with OAuth', () => {
  let server: TestServer;
  let oauth: FakeOAuth;

  beforeAll(async () => {
    server = await startTestServer(await freshPglite());
    oauth = await startFakeOAuth({ accessTokenTtl: 3600 });
    await server.api('POST', '/api/agents', { name: 'ada' });
    await server.api('POST', '/api/agents', { name: 'bob' });
    const added = await server.api('POST', '/api/mcp/providers', {
      slug: 'secure',
      url: oauth.mcpUrl,
      allow_loopback_http: true,
    });
    expect(added.status).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await oauth?.close();
    await server?.close();
    await server?.mesh.db.close();
  });

  it('authorizes with PKCE and the resource indicator, then binds and uses the agent’s tokens', async () => {
    const started = await server.api('POST', '/api/agents/ada/mcp/secure/oauth');
    expect(started.status).toBe(200);
    const authorizationUrl = (started.json as { authorization_url: string }).authorization_url;
    const asked = new URL(authorizationUrl).searchParams;
    expect(asked.get('code_challenge_method')).toBe('S256');
    expect(asked.get('resource')).toBe(oauth.mcpUrl);
    // Nothing is bound before the authorization finishes.
    expect((await server.api('GET', '/api/agents/ada/mcp')).json).toEqual({ connections: [] });

    const callback = await approve(authorizationUrl);
    expect(callback.pathname).toMatch(/^\/mcp\/oauth\/callback\/[0-9a-f-]{36}\/[0-9a-f-]{36}$/);
    expect(callback.origin).toBe(new URL(server.url).origin);

    // A forged state is refused and binds nothing; the real one completes.
    const forged = new URL(callback);
    forged.searchParams.set('state', 'forged-state');
    const refused = await fetch(forged, { redirect: 'manual' });
    expect(refused.status).toBe(303);
    expect(refused.headers.get('location')).toBe('/agents');
    expect((await server.api('GET', '/api/agents/ada/mcp')).json).toEqual({ connections: [] });

    const landed = await fetch(callback, { redirect: 'manual' });
    expect(landed.status).toBe(303);
    expect(landed.headers.get('location')).toBe('/agents/ada/mcp');

    const token = oauth.tokenRequests.find(
      (r) => r.params.get('grant_type') === 'authorization_code',
    );
    expect(token?.outcome).toBe('issued');
    expect(token?.params.get('code_verifier')).toBeTruthy();
    expect(token?.params.get('resource')).toBe(oauth.mcpUrl);

    const connections = (await server.api('GET', '/api/agents/ada/mcp')).json as {
      connections: { provider: string; auth: string }[];
    };
    expect(connections.connections).toEqual([
      expect.objectContaining({ provider: 'secure', auth: 'oauth' }),
    ]);
    const catalog = (await server.api('GET', '/api/agents/ada/mcp/secure/catalog')).json as {
      tools: { tool: string }[];
    };
    expect(catalog.tools.length).toBeGreaterThan(0);

    // Calls carry an access token the authorization server issued to this agent's client.
    const tool = catalog.tools[0]?.tool ?? '';
    const before = oauth.mcpRequests.length;
    await server.mesh.db.query('select 1');
    const { callToolAsOperator } = await import('../../src/app/runs/operator-call.ts');
    const called = await callToolAsOperator(server.mesh, {
      agent: 'ada',
      tool,
      arguments: '{}',
      operator: 'test',
    });
    expect(called.status).toBe('succeeded');
    const used = oauth.mcpRequests.slice(before).map((r) => r.token);
    expect(used.length).toBeGreaterThan(0);
    expect(used.every((t) => t !== undefined && oauth.issuedSecrets.has(t))).toBe(true);

    // An expired access token is refreshed (with the resource) and the new one is used.
    oauth.expireAccessTokens();
    const refreshedCall = await callToolAsOperator(server.mesh, {
      agent: 'ada',
      tool,
      arguments: '{}',
      operator: 'test',
    });
    expect(refreshedCall.status).toBe('succeeded');
    const refresh = oauth.tokenRequests.find((r) => r.params.get('grant_type') === 'refresh_token');
    expect(refresh?.params.get('resource')).toBe(oauth.mcpUrl);

    // Bob has no binding and so nothing from this server; no token value reached any response.
    const bob = await server.api('GET', '/api/agents/bob/mcp');
    expect(bob.json).toEqual({ connections: [] });
    const everything = server.bodies.join('\n') + server.logs.join('\n');
    for (const secret of oauth.issuedSecrets) expect(everything).not.toContain(secret);
  });
});
