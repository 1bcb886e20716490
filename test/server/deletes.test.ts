import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { signIn, startTestServer, type TestServer } from '../support/server.ts';

/** Live (unretired) secret rows, by owner type. */
async function liveSecrets(server: TestServer): Promise<Record<string, number>> {
  const { rows } = await server.mesh.db.query<{ owner_type: string; n: number }>(
    `select owner_type, count(*)::int as n from secrets where retired_at is null group by owner_type`,
  );
  return Object.fromEntries(rows.map((r) => [r.owner_type, r.n]));
}

async function count(server: TestServer, table: string): Promise<number> {
  const { rows } = await server.mesh.db.query<{ n: number }>(
    `select count(*)::int as n from ${table}`,
  );
  return rows[0]?.n ?? 0;
}

describe.each(testDatabases())(
  'every resource the API creates can be deleted, on $name',
  (database) => {
    let server: TestServer;
    let mcp: FakeMcpServer;
    let dispose: () => Promise<void>;
    const token = `mcp-delete-${Math.random().toString(36).slice(2)}`;

    beforeAll(async () => {
      const opened = await database.open();
      dispose = () => opened.dispose();
      server = await startTestServer(opened.db);
      mcp = await startFakeMcpServer({
        acceptedTokens: new Set([token]),
        tools: [textTool('lookup', 'Look up', { annotations: { readOnlyHint: true } })],
      });
    }, 60_000);

    afterAll(async () => {
      await mcp?.close();
      await server?.close();
      await dispose?.();
    });

    it('deletes agents, model providers and MCP servers through the API, refusing what is in use', async () => {
      const api = server.api.bind(server);
      const provider = {
        name: 'gone',
        kind: 'openai_compatible',
        base_url: 'https://models.example/v1',
        api_key: 'sk-delete-me-0123456789',
      };
      expect((await api('POST', '/api/providers', provider)).status).toBe(201);
      expect(
        (await api('POST', '/api/agents', { name: 'temp', provider: 'gone', model: 'm-1' })).status,
      ).toBe(201);
      expect(
        (
          await api('POST', '/api/mcp/providers', {
            slug: 'idx',
            url: mcp.url,
            allow_loopback_http: true,
          })
        ).status,
      ).toBe(201);
      expect((await api('PUT', '/api/agents/temp/mcp/idx/token', { value: token })).status).toBe(
        200,
      );
      expect(
        (
          await api('PUT', '/api/agents/temp/packages/example.tracker/secrets/api_token', {
            value: 'trk-delete-me-0123456789',
          })
        ).status,
      ).toBe(200);
      expect(await liveSecrets(server)).toEqual({
        model_provider: 1,
        agent_tool: 1,
        agent_tool_provider: 1,
      });

      // In use: refused with who is in the way, and nothing changes.
      const providerInUse = await api('DELETE', '/api/providers/gone');
      expect(providerInUse.status).toBe(409);
      expect(providerInUse.json).toMatchObject({
        error: { code: 'provider_in_use', message: expect.stringContaining('temp') as string },
      });
      const serverInUse = await api('DELETE', '/api/mcp/providers/idx');
      expect(serverInUse.status).toBe(409);
      expect(serverInUse.json).toMatchObject({ error: { code: 'tool_provider_in_use' } });

      // An agent with an unfinished run is not deleted out from under its worker.
      const agent = (await api('GET', '/api/agents/temp')).json as { id: string };
      const queued = await server.mesh.ledger.createRun({
        agentId: agent.id,
        kind: 'script',
        provenance: { actor: 'test' },
        budget: { maxToolCalls: 1, maxRounds: 1 },
        checkpoint: { kind: 'script', calls: [] },
      });
      const busy = await api('DELETE', '/api/agents/temp');
      expect(busy.status).toBe(409);
      expect(busy.json).toMatchObject({ error: { code: 'agent_busy' } });
      expect((await api('GET', '/api/agents/temp')).status).toBe(200);
      await server.mesh.db.query(`update runs set status = 'succeeded' where id = $1`, [queued.id]);

      expect((await api('DELETE', '/api/agents/temp')).status).toBe(204);
      expect((await api('GET', '/api/agents/temp')).status).toBe(404);
      expect(await count(server, 'runs')).toBe(0);
      expect(await count(server, 'agent_tool_providers')).toBe(0);
      expect(await liveSecrets(server)).toEqual({ model_provider: 1 });

      expect((await api('DELETE', '/api/mcp/providers/idx')).status).toBe(204);
      expect((await api('DELETE', '/api/providers/gone')).status).toBe(204);
      expect(await liveSecrets(server)).toEqual({});
      // Retired material is erased, not merely marked.
      const { rows } = await server.mesh.db.query<{ n: number }>(
        `select count(*)::int as n from secrets where ciphertext is not null`,
      );
      expect(rows[0]?.n).toBe(0);
      expect((await api('GET', '/api/providers')).json).toEqual({ providers: [] });

      // Gone means gone: each can be created again under its name, and deleting twice is a 404.
      expect((await api('POST', '/api/providers', provider)).status).toBe(201);
      expect((await api('DELETE', '/api/providers/gone')).status).toBe(204);
      for (const path of ['/api/agents/temp', '/api/providers/gone', '/api/mcp/providers/idx']) {
        expect((await api('DELETE', path)).status, path).toBe(404);
      }
    });

    it('deletes them through the web UI’s forms, with the agent’s name typed to confirm', async () => {
      const api = server.api.bind(server);
      expect((await api('POST', '/api/agents', { name: 'paged' })).status).toBe(201);
      expect(
        (
          await api('POST', '/api/providers', {
            name: 'paged',
            kind: 'scripted',
            script: { fallback: { content: 'hi' } },
          })
        ).status,
      ).toBe(201);
      expect(
        (await api('POST', '/api/mcp/providers', { slug: 'paged', url: 'https://mcp.example/mcp' }))
          .status,
      ).toBe(201);

      const { cookie, csrf } = await signIn(server);
      const agentsPage = await (await fetch(`${server.url}agents`, { headers: { cookie } })).text();
      expect(agentsPage).toContain('action="/agents/paged/delete"');
      const providersPage = await (
        await fetch(`${server.url}providers`, { headers: { cookie } })
      ).text();
      expect(providersPage).toContain('action="/providers/paged/delete"');
      const mcpPage = await (await fetch(`${server.url}mcp`, { headers: { cookie } })).text();
      expect(mcpPage).toContain('action="/mcp/providers/paged/delete"');

      const post = (path: string, form: Record<string, string> = {}) =>
        fetch(`${server.url}${path.slice(1)}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
          body: new URLSearchParams({ csrf, ...form }).toString(),
        });

      const unconfirmed = await post('/agents/paged/delete', { confirm: 'other' });
      expect(unconfirmed.status).toBe(303);
      expect((await api('GET', '/api/agents/paged')).status).toBe(200);

      expect((await post('/agents/paged/delete', { confirm: 'paged' })).status).toBe(303);
      expect((await api('GET', '/api/agents/paged')).status).toBe(404);
      expect((await post('/providers/paged/delete')).status).toBe(303);
      expect((await post('/mcp/providers/paged/delete')).status).toBe(303);
      expect((await api('GET', '/api/providers')).json).toEqual({ providers: [] });
      expect((await api('GET', '/api/mcp/providers')).json).toMatchObject({ providers: [] });
    });
  },
);
