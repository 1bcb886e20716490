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
  let server: TestServer;
  let tracker: Awaited<ReturnType<typeof startFakeTracker>>;
  let model: FakeChatCompletions;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    tracker = await startFakeTracker();
    model = await startFakeChatCompletions();
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

    model.enqueue(
      {
        kind: 'completion',
        toolCalls: [
          { id: 'call_1', name: 'tracker_search_issues', arguments: '{"query":"login bug"}' },
        ],
      },
      { kind: 'completion', content: 'There are two: MESH-1 and MESH-2.' },
    );
    const sent = await api('POST', '/api/agents/finder/messages', {
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

    expect(server.bodies.join('\n')).not.toContain(canary);
    expect(server.logs.join('\n')).not.toContain(canary);
    expect(model.requests.map((r) => r.body).join('\n')).not.toContain(canary);

    // Every text-like column of every table, and every byte column as bytes.
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
      const { rows } = await server.mesh.db.query<{ n: number }>(
        `select count(*)::int as n from "${table}" where ${test}`,
        [canary],
      );
      expect(rows[0]?.n, `${table}.${column}`).toBe(0);
    }
  });
});
