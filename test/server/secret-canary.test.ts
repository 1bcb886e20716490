import { randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolHandler } from '../../src/tool/definition.ts';
import { testDatabases } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { serverCatalog, startTestServer, type TestServer } from '../support/server.ts';

/** A fake issue tracker on loopback: answers searches and records what it was sent. */
async function startFakeTracker(): Promise<{
  url: string;
  received: IncomingHttpHeaders[];
  close(): Promise<void>;
}> {
  const received: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    received.push(req.headers);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ total: 2, issues: [{ key: 'MESH-1' }, { key: 'MESH-2' }] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe.each(testDatabases())('a captured secret stays secret on $name', (database) => {
  const canary = `trk-canary-${randomBytes(12).toString('hex')}`;
  const mcpCanary = `mcp-canary-${randomBytes(12).toString('base64url')}`;
  const modelCanary = `sk-canary-${randomBytes(12).toString('hex')}`;
  let server: TestServer;
  let tracker: Awaited<ReturnType<typeof startFakeTracker>>;
  let model: FakeChatCompletions;
  let echo: FakeMcpServer;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    tracker = await startFakeTracker();
    model = await startFakeChatCompletions();
    echo = await startFakeMcpServer({ acceptedTokens: new Set([mcpCanary]) });
    // The tracker's search handler uses the agent's own token, as a real package would.
    const searchIssues: ToolHandler = async (ctx, args) => {
      const token = await ctx.secret('tracker_api_token');
      const res = await fetch(
        `${tracker.url}/search?q=${encodeURIComponent(JSON.stringify(args['query']))}`,
        {
          headers: { authorization: `Bearer ${token}` },
          signal: ctx.signal,
        },
      );
      const found = (await res.json()) as { total: number; issues: { key: string }[] };
      return { text: `found ${found.total}: ${found.issues.map((i) => i.key).join(', ')}` };
    };
    const opened = await database.open();
    dispose = () => opened.dispose();
    server = await startTestServer(opened.db, { catalog: serverCatalog({ searchIssues }) });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await model?.close();
    await tracker?.close();
    await echo?.close();
    await dispose?.();
  });

  it('is used by the handler, and appears in no response, log line, model request or column', async () => {
    const api = server.api.bind(server);
    expect(
      (
        await api('POST', '/api/providers', {
          name: 'fake',
          kind: 'openai_compatible',
          base_url: model.baseUrl,
          api_key: 'sk-model-key',
        })
      ).status,
    ).toBe(201);
    expect(
      (await api('POST', '/api/agents', { name: 'finder', provider: 'fake', model: 'fake-1' }))
        .status,
    ).toBe(201);
    const captured = await api(
      'PUT',
      '/api/agents/finder/packages/example.tracker/secrets/api_token',
      { value: canary },
    );
    expect(captured.status).toBe(200);
    // The tracker has an on_enable hook: its tools are offered once its install is enabled.
    const enabled = await api('POST', '/api/agents/finder/packages/example.tracker/enable');
    expect(enabled.json).toMatchObject({ state: 'enabled', offered: true });

    model.enqueue(
      {
        kind: 'completion',
        toolCalls: [
          { id: 'call_1', name: 'tracker_search_issues', arguments: '{"query":"login bug"}' },
        ],
      },
      { kind: 'completion', content: 'There are two: MESH-1 and MESH-2.' },
    );
    const sent = await api('POST', '/api/agents/finder/messages?wait=60', {
      body: 'find the login bug issues',
    });
    expect(sent.json).toMatchObject({
      status: 'succeeded',
      reply: 'There are two: MESH-1 and MESH-2.',
    });

    // The handler really used it, on the wire to the vendor.
    expect(tracker.received.map((h) => h.authorization)).toEqual([`Bearer ${canary}`]);

    // Read back everything an operator can read, so those bodies are searched too.
    const runId = (sent.json as { run_id: string }).run_id;
    const conversationId = (sent.json as { conversation_id: string }).conversation_id;
    for (const path of [
      `/api/runs/${runId}`,
      '/api/agents/finder/packages',
      '/api/agents/finder/runs',
      `/api/conversations/${conversationId}/messages`,
      '/api/providers',
      '/api/packages/example.tracker',
    ]) {
      expect((await api('GET', path)).status).toBe(200);
    }
    const run = await api('GET', `/api/runs/${runId}`);
    expect(run.text).toContain('found 2: MESH-1, MESH-2');

    // The web UI's pages, through a real login.
    const login = await fetch(`${server.url}login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: server.token }).toString(),
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(cookie).toMatch(/^mesh_session=/);
    for (const page of [
      'agents/finder/tools',
      `runs/${runId}`,
      'providers',
      'agents/finder/runs',
    ]) {
      const res = await fetch(`${server.url}${page}`, { headers: { cookie } });
      expect(res.status).toBe(200);
      server.bodies.push(await res.text());
    }

    await expectNowhere(server, model, [canary]);
  });

  it('is removed, in every encoding, from what a remote MCP server and a model provider send back', async () => {
    const api = server.api.bind(server);
    const basic = Buffer.from(`agent:${mcpCanary}`).toString('base64');
    echo.state.tools = [
      textTool(
        'lookup',
        `Look one record up (your key: ${Buffer.from(mcpCanary).toString('hex')})`,
        {
          annotations: { readOnlyHint: true },
        },
      ),
      textTool('fail', 'Fails', { annotations: { readOnlyHint: true } }),
    ];
    echo.state.call = (name) =>
      name === 'lookup'
        ? {
            content: [{ type: 'text', text: `you sent Bearer ${mcpCanary}; as Basic ${basic}` }],
            structuredContent: { hex: Buffer.from(mcpCanary).toString('hex') },
          }
        : {
            content: [
              {
                type: 'text',
                text: `refused https://idp.example/?t=${encodeURIComponent(mcpCanary)}`,
              },
            ],
            isError: true,
          };
    expect(
      (
        await api('POST', '/api/providers', {
          name: 'canary',
          kind: 'openai_compatible',
          base_url: model.baseUrl,
          api_key: modelCanary,
        })
      ).status,
    ).toBe(201);
    expect(
      (await api('POST', '/api/agents', { name: 'echoer', provider: 'canary', model: 'fake-1' }))
        .status,
    ).toBe(201);
    expect(
      (
        await api('POST', '/api/mcp/providers', {
          slug: 'echo',
          url: echo.url,
          allow_loopback_http: true,
        })
      ).status,
    ).toBe(201);
    expect(
      (await api('PUT', '/api/agents/echoer/mcp/echo/token', { value: mcpCanary })).status,
    ).toBe(200);
    expect((await api('POST', '/api/agents/echoer/mcp/echo/catalog/review')).status).toBe(204);

    model.enqueue(
      {
        kind: 'completion',
        toolCalls: [
          { id: 'call_1', name: 'echo__lookup', arguments: '{"q":"x"}' },
          { id: 'call_2', name: 'echo__fail', arguments: '{"q":"y"}' },
        ],
      },
      {
        kind: 'completion',
        content: `Done. Your key, base64: ${Buffer.from(modelCanary).toString('base64')}`,
      },
      // The next turn's provider refuses, quoting the key URL-encoded and base64url-encoded.
      {
        kind: 'error',
        status: 400,
        message: `bad key=${encodeURIComponent(modelCanary)} (${Buffer.from(modelCanary).toString('base64url')})`,
        code: null,
      },
    );
    const sent = await api('POST', '/api/agents/echoer/messages?wait=60', { body: 'look it up' });
    expect(sent.json).toMatchObject({ status: 'succeeded' });
    const failed = await api('POST', '/api/agents/echoer/messages?wait=60', { body: 'again' });
    expect(failed.json).toMatchObject({ status: 'failed' });

    // The server really sent the token, and the calls really came back.
    expect(echo.received.some((r) => r.headers.authorization === `Bearer ${mcpCanary}`)).toBe(true);
    const runId = (sent.json as { run_id: string }).run_id;
    const run = await api('GET', `/api/runs/${runId}`);
    expect(run.text).toContain('you sent Bearer [redacted]');
    expect(run.text).toContain('refused https://idp.example/?t=[redacted]');
    for (const path of [
      `/api/runs/${(failed.json as { run_id: string }).run_id}`,
      '/api/agents/echoer/runs',
      `/api/conversations/${(sent.json as { conversation_id: string }).conversation_id}/messages`,
      '/api/agents/echoer/mcp/echo/catalog',
    ]) {
      expect((await api('GET', path)).status).toBe(200);
    }

    await expectNowhere(server, model, [mcpCanary, modelCanary]);
  });
});

/** The forms a leak would take: the value and its common encodings. */
function leakForms(secret: string): string[] {
  const bytes = Buffer.from(secret);
  return [
    secret,
    encodeURIComponent(secret),
    bytes.toString('hex'),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    Buffer.from(`agent:${secret}`).toString('base64').slice(8, -4),
  ];
}

/**
 * No form of any of `secrets` in a response body, page, log line or model request, nor in any
 * text-like column of any table (byte columns are searched as bytes).
 */
async function expectNowhere(
  server: TestServer,
  model: FakeChatCompletions,
  secrets: readonly string[],
): Promise<void> {
  const forms = secrets.flatMap(leakForms);
  const seen = {
    bodies: server.bodies.join('\n'),
    logs: server.logs.join('\n'),
    model: model.requests.map((r) => r.body).join('\n'),
  };
  for (const form of forms) {
    for (const [where, text] of Object.entries(seen)) expect(text, where).not.toContain(form);
  }

  const { rows: columns } = await server.mesh.db.query<{
    table: string;
    column: string;
    type: string;
  }>(
    `select table_name as "table", column_name as "column", data_type as "type"
     from information_schema.columns
     where table_schema = 'public'
       and data_type in ('text', 'character varying', 'jsonb', 'json', 'ARRAY', 'bytea', 'USER-DEFINED')`,
  );
  expect(columns.map((c) => `${c.table}.${c.column}`)).toEqual(
    expect.arrayContaining(['run_steps.data', 'run_steps.observation', 'messages.body']),
  );
  for (const { table, column, type } of columns) {
    const test =
      type === 'bytea'
        ? `position(convert_to($1, 'UTF8') in "${column}") > 0`
        : `"${column}"::text like '%' || $1 || '%'`;
    for (const form of forms) {
      const { rows } = await server.mesh.db.query<{ n: number }>(
        `select count(*)::int as n from "${table}" where ${test}`,
        [form],
      );
      expect(rows[0]?.n, `${table}.${column}`).toBe(0);
    }
  }
}
