import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPglite } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

describe('the remote-MCP routes of the operator API', () => {
  let server: TestServer;
  let mcp: FakeMcpServer;
  const token = `mcp-api-canary-${Math.random().toString(36).slice(2)}`;

  beforeAll(async () => {
    server = await startTestServer(await freshPglite());
    mcp = await startFakeMcpServer({
      acceptedTokens: new Set([token]),
      tools: [textTool('search', 'Search'), textTool('lookup', 'Look up')],
    });
    await server.api('POST', '/api/agents', { name: 'ada' });
  }, 60_000);

  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    await server?.mesh.db.close();
  });

  it('registers a server, connects an agent write-only, and manages its catalog', async () => {
    const refused = await server.api('POST', '/api/mcp/providers', { slug: 'idx', url: mcp.url });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: { code: 'invalid_tool_provider' } });
    const added = await server.api('POST', '/api/mcp/providers', {
      slug: 'idx',
      url: mcp.url,
      allow_loopback_http: true,
    });
    expect(added.status).toBe(201);

    const wrong = await server.api('PUT', '/api/agents/ada/mcp/idx/token', { value: 'nope' });
    expect(wrong.status).toBe(502);
    expect(wrong.json).toMatchObject({ error: { code: 'mcp_transport_failed' } });
    expect((await server.api('GET', '/api/agents/ada/mcp')).json).toEqual({ connections: [] });
    const connected = await server.api('PUT', '/api/agents/ada/mcp/idx/token', { value: token });
    expect(connected.status).toBe(200);
    expect(connected.json).toMatchObject({ check: { pages: 1 } });
    expect((connected.json as { check: { added: string[] } }).check.added.sort()).toEqual([
      'lookup',
      'search',
    ]);

    const catalog = await server.api('GET', '/api/agents/ada/mcp/idx/catalog');
    const tools = (
      catalog.json as { tools: { tool: string; status: string; fingerprint: string }[] }
    ).tools;
    expect(tools.map((t) => [t.tool, t.status])).toEqual([
      ['idx__lookup', 'new'],
      ['idx__search', 'new'],
    ]);

    expect(
      (await server.api('PUT', '/api/agents/ada/mcp/idx/tools/lookup', { legacy_query: true }))
        .status,
    ).toBe(204);
    expect(
      (await server.api('PUT', '/api/agents/ada/mcp/idx/tools/search', { excluded: true })).status,
    ).toBe(204);
    expect((await server.api('POST', '/api/agents/ada/mcp/idx/catalog/review')).status).toBe(204);
    const reviewed = (
      (await server.api('GET', '/api/agents/ada/mcp/idx/catalog')).json as {
        tools: { name: string; status: string; semantics: string; excluded: boolean }[];
      }
    ).tools;
    expect(reviewed).toEqual([
      expect.objectContaining({
        name: 'lookup',
        status: 'reviewed',
        semantics: 'query',
        legacy_query_marked: true,
        legacy_query_mark_lost: false,
      }),
      expect.objectContaining({ name: 'search', status: 'reviewed', excluded: true }),
    ]);

    // A changed definition shows as changed at the next check and loses query semantics.
    mcp.state.tools[1] = textTool('lookup', 'Look up, and now also write');
    const check = await server.api('POST', '/api/agents/ada/mcp/idx/catalog/check');
    expect(check.json).toMatchObject({ changed: ['lookup'] });
    const changed = (
      (await server.api('GET', '/api/agents/ada/mcp/idx/catalog')).json as {
        tools: {
          name: string;
          status: string;
          semantics: string;
          legacy_query_marked: boolean;
          legacy_query_mark_lost: boolean;
        }[];
      }
    ).tools.find((t) => t.name === 'lookup');
    // The operator's mark was for the old definition: it no longer says marked, and says lost.
    expect(changed).toMatchObject({
      status: 'changed',
      semantics: 'effect',
      legacy_query_marked: false,
      legacy_query_mark_lost: true,
    });

    const scopes = await server.api('PUT', '/api/agents/ada/mcp/idx/scopes', {
      audiences: ['shared'],
      conversation_ids: null,
    });
    expect(scopes.status).toBe(204);
    const connections = await server.api('GET', '/api/agents/ada/mcp');
    expect(connections.json).toMatchObject({
      connections: [{ provider: 'idx', audiences: ['shared'], excluded_tools: ['search'] }],
    });

    const disconnected = await server.api('DELETE', '/api/agents/ada/mcp/idx');
    expect(disconnected.status).toBe(200);
    expect(disconnected.json).toEqual({ agent: 'ada', provider: 'idx', disconnected: true });
    expect((await server.api('GET', '/api/agents/ada/mcp/idx/catalog')).status).toBe(404);
    expect(server.bodies.join('\n')).not.toContain(token);
    expect(server.logs.join('\n')).not.toContain(token);
  });

  it('checks a server URL at registration as a connection would, and keeps the loopback allowance to loopback', async () => {
    const refusals: [Record<string, unknown>, string, string][] = [
      [{ url: 'https://169.254.169.254/mcp' }, 'url', 'link-local'],
      [{ url: 'https://10.1.2.3/mcp' }, 'url', 'private'],
      [{ url: 'https://[fd00::1]/mcp' }, 'url', 'unique-local'],
      [{ url: 'https://[::ffff:192.168.1.1]/mcp' }, 'url', 'private'],
      [{ url: 'https://127.0.0.1/mcp' }, 'url', 'loopback'],
      [{ url: 'ftp://mcp.example/mcp' }, 'url', 'https'],
      [{ url: 'https://user:pw@mcp.example/mcp' }, 'url', 'credentials'],
      [
        { url: 'https://mcp.example/mcp', allow_loopback_http: true },
        'allow_loopback_http',
        'loopback',
      ],
      [
        { url: 'http://mcp.example/mcp', allow_loopback_http: true },
        'allow_loopback_http',
        'loopback',
      ],
    ];
    for (const [input, field, says] of refusals) {
      const res = await server.api('POST', '/api/mcp/providers', { slug: 'refused', ...input });
      expect(res.status, JSON.stringify(input)).toBe(400);
      expect(res.json, JSON.stringify(input)).toMatchObject({
        error: { code: 'invalid_tool_provider', field },
      });
      expect((res.json as { error: { message: string } }).error.message).toContain(says);
      expect(res.text).not.toContain('pw@');
    }
    const listed = (await server.api('GET', '/api/mcp/providers')).json as {
      providers: { slug: string }[];
    };
    expect(listed.providers.map((p) => p.slug)).not.toContain('refused');

    const ok = await server.api('POST', '/api/mcp/providers', {
      slug: 'public',
      url: 'https://mcp.example/mcp',
    });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ allow_loopback_http: false });
    const local = await server.api('POST', '/api/mcp/providers', {
      slug: 'local',
      url: 'http://localhost:9/mcp',
      allow_loopback_http: true,
    });
    expect(local.status).toBe(201);
    expect(local.json).toMatchObject({ allow_loopback_http: true });
  });
});
