import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOperatorToken } from '../../src/app/operators/operator-auth.ts';
import { apiRoutes } from '../../src/server/api.ts';
import { revokeOperatorToken } from '../../src/store/operator-auth.ts';
import { testDatabases } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { sseEvents } from '../support/sse.ts';
import { scriptedAgent } from '../support/turn.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A concrete path for a route template: every parameter filled with a plausible value. */
function concrete(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'run' || name === 'conversation' || name === 'artifact'
      ? '00000000-0000-4000-8000-000000000000'
      : `some-${name}`,
  );
}

describe.each(testDatabases())('the HTTP API on $name', (database) => {
  let server: TestServer;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const opened = await database.open();
    server = await startTestServer(opened.db);
    dispose = () => opened.dispose();
    await scriptedAgent(
      server.mesh,
      {
        rules: [
          {
            match: 'remember (.+)',
            rounds: [
              { toolCalls: [{ name: 'remember', arguments: { content: '$1' } }] },
              { content: 'Noted.' },
            ],
          },
        ],
        fallback: { content: 'Hello.' },
      },
      'ada',
    );
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await dispose?.();
  });

  it('refuses every route without a token, with a wrong one, and with a revoked one: 401', async () => {
    const revoked = await createOperatorToken(server.mesh.db, 'to revoke');
    await revokeOperatorToken(server.mesh.db, revoked.record.id);
    const wrong = `mesh_op_${'A'.repeat(43)}`;
    expect(apiRoutes.length).toBeGreaterThanOrEqual(20);
    for (const route of apiRoutes) {
      for (const token of [null, wrong, 'not-even-a-token', revoked.token]) {
        const res = await server.api(
          route.method,
          concrete(route.path),
          route.body ? {} : undefined,
          {
            token,
          },
        );
        expect(res.status, `${route.method} ${route.path} with ${String(token)}`).toBe(401);
        expect(res.headers.get('www-authenticate')).toBe('Bearer realm="mesh"');
        expect(res.json).toMatchObject({ error: { code: 'unauthorized' } });
      }
    }
    // Paths no route serves are refused the same way: nothing under /api answers without a token.
    expect((await server.api('GET', '/api/nothing-here', undefined, { token: null })).status).toBe(
      401,
    );
    // A session cookie is not an API credential.
    const cookie = await server.api('GET', '/api/agents', undefined, {
      token: null,
      headers: { cookie: 'mesh_session=whatever' },
    });
    expect(cookie.status).toBe(401);
  });

  it('serves an OpenAPI document that lists exactly the router\u2019s routes', async () => {
    const res = await server.api('GET', '/api/openapi.json');
    expect(res.status).toBe(200);
    const doc = res.json as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const listed = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(listed.sort()).toEqual(apiRoutes.map((r) => `${r.method} ${r.path}`).sort());
    for (const ops of Object.values(doc.paths))
      for (const op of Object.values(ops)) expect(op.responses['401']).toBeDefined();
    // The live events are documented as an event stream, with their refusals and event names.
    const events = doc.paths['/api/runs/{run}/events']?.['get'] as
      { description?: string; responses: Record<string, { content?: object }> } | undefined;
    expect(Object.keys(events?.responses['200']?.content ?? {})).toEqual(['text/event-stream']);
    expect(Object.keys(events?.responses ?? {})).toEqual(
      expect.arrayContaining(['400', '401', '404', '429']),
    );
    for (const name of ['`step`', '`reply`', '`progress`', '`state`', 'Last-Event-ID'])
      expect(events?.description).toContain(name);
    const conversation = doc.paths['/api/conversations/{conversation}/events']?.['get'] as
      { description?: string; responses: Record<string, { content?: object }> } | undefined;
    expect(Object.keys(conversation?.responses['200']?.content ?? {})).toEqual([
      'text/event-stream',
    ]);
    expect(conversation?.description).toContain('<run id>:<seq>');
  });

  it('creates and reads agents, refusing a bad name or a duplicate by field', async () => {
    const created = await server.api('POST', '/api/agents', { name: 'grace' });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ name: 'grace', model: null });
    expect((await server.api('POST', '/api/agents', { name: 'grace' })).status).toBe(409);
    const bad = await server.api('POST', '/api/agents', { name: 'Not A Name' });
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ error: { code: 'invalid_body' } });
    expect(bad.text).toContain('name');
    expect(bad.text).not.toContain('Not A Name');
    const unknown = await server.api('POST', '/api/agents', { name: 'x1', colour: 'blue' });
    expect(unknown.json).toMatchObject({ error: { message: 'unknown field `colour`' } });
    expect(unknown.text).not.toContain('blue');
    expect((await server.api('GET', '/api/agents/grace')).json).toMatchObject({ name: 'grace' });
    expect((await server.api('GET', '/api/agents/nobody')).status).toBe(404);
    const list = (await server.api('GET', '/api/agents')).json as { agents: { name: string }[] };
    expect(list.agents.map((a) => a.name)).toEqual(expect.arrayContaining(['ada', 'grace']));
  });

  it('projects packages from their manifests', async () => {
    const res = await server.api('GET', '/api/packages');
    const { packages } = res.json as {
      packages: {
        id: string;
        tools: { name: string; class: string }[];
        config: { key: string }[];
      }[];
    };
    expect(packages.map((p) => p.id)).toEqual(
      expect.arrayContaining(['mesh.memory', 'example.tracker']),
    );
    const tracker = packages.find((p) => p.id === 'example.tracker');
    expect(tracker?.config.map((c) => c.key)).toEqual([
      'api_token',
      'default_project',
      'page_size',
    ]);
    expect(tracker?.tools.map((t) => [t.name, t.class])).toContainEqual([
      'tracker_create_issue',
      'effect',
    ]);
    expect((await server.api('GET', '/api/packages/example.tracker')).status).toBe(200);
    expect((await server.api('GET', '/api/packages/nope')).status).toBe(404);
  });

  it('validates config against the manifest, naming the key and never the value', async () => {
    const put = (key: string, value: unknown) =>
      server.api('PUT', `/api/agents/ada/packages/example.tracker/config/${key}`, { value });
    expect((await put('page_size', 50)).status).toBe(204);
    expect((await put('default_project', 'OPS')).status).toBe(204);

    const wrongType = await put('page_size', 'fifty-canary');
    expect(wrongType.status).toBe(400);
    expect(wrongType.json).toMatchObject({ error: { code: 'config_invalid', field: 'page_size' } });
    expect(wrongType.text).not.toContain('fifty-canary');

    const unknownKey = await put('colour', 'blue-canary');
    expect(unknownKey.status).toBe(400);
    expect(unknownKey.json).toMatchObject({ error: { code: 'config_invalid', field: 'colour' } });
    expect(unknownKey.text).not.toContain('blue-canary');

    const secretAsConfig = await put('api_token', 'tok-canary');
    expect(secretAsConfig.status).toBe(400);
    expect(secretAsConfig.text).toContain('api_token is a secret');
    expect(secretAsConfig.text).not.toContain('tok-canary');

    const object = await put('page_size', { deep: 'obj-canary' });
    expect(object.status).toBe(400);
    expect(object.text).not.toContain('obj-canary');

    const view = await server.api('GET', '/api/agents/ada/packages');
    const tracker = (
      view.json as { packages: { id: string; values: unknown; set_keys: string[] }[] }
    ).packages.find((p) => p.id === 'example.tracker');
    expect(tracker?.values).toEqual({ default_project: 'OPS', page_size: 50 });
    expect(tracker?.set_keys.sort()).toEqual(['default_project', 'page_size']);

    expect(
      (await server.api('DELETE', '/api/agents/ada/packages/example.tracker/config/page_size'))
        .status,
    ).toBe(204);
    const after = await server.api('GET', '/api/agents/ada/packages');
    expect(JSON.stringify(after.json)).toContain('"page_size":20');
  });

  it('captures secrets write-only: responses carry presence and version, never the value', async () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    const put = await server.api(
      'PUT',
      '/api/agents/ada/packages/example.tracker/secrets/api_token',
      {
        value: canary,
      },
    );
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({
      key: 'api_token',
      kind: 'tracker_api_token',
      present: true,
      version: 1,
    });
    const view = await server.api('GET', '/api/agents/ada/packages');
    const tracker = (
      view.json as {
        packages: { id: string; secrets: Record<string, unknown>; tools: { offer: unknown }[] }[];
      }
    ).packages.find((p) => p.id === 'example.tracker');
    expect(tracker?.secrets['api_token']).toMatchObject({ present: true, version: 1 });
    // The tracker has an on_enable hook: with its token captured it still waits for an enable.
    expect(tracker?.tools[0]?.offer).toEqual({
      direct: 'package example.tracker is not enabled for this agent',
      shared: 'package example.tracker is not enabled for this agent',
    });
    const enabled = await server.api('POST', '/api/agents/ada/packages/example.tracker/enable');
    expect(enabled.status).toBe(200);
    expect(enabled.json).toMatchObject({
      package: 'example.tracker',
      state: 'enabled',
      offered: true,
      pinned: { version: '1.2.0' },
      transitions: [
        { seq: 1, action: 'enable', outcome: 'succeeded', secret_version: 'tracker_api_token@1' },
      ],
    });
    expect(JSON.stringify(enabled.json)).not.toContain(canary);
    const offered = (
      (await server.api('GET', '/api/agents/ada/packages')).json as {
        packages: { id: string; tools: { offer: unknown }[] }[];
      }
    ).packages.find((p) => p.id === 'example.tracker');
    expect(offered?.tools[0]?.offer).toEqual({ direct: null, shared: null });
    const notSecret = await server.api(
      'PUT',
      '/api/agents/ada/packages/example.tracker/secrets/page_size',
      { value: canary },
    );
    expect(notSecret.status).toBe(400);
    // Listed by presence, kind and version; revoked, it is gone from the list.
    const listed = await server.api('GET', '/api/agents/ada/secrets');
    expect(listed.json).toEqual({
      secrets: [
        expect.objectContaining({
          package: 'example.tracker',
          key: 'api_token',
          kind: 'tracker_api_token',
          version: 1,
        }),
      ],
    });
    const removed = await server.api(
      'DELETE',
      '/api/agents/ada/packages/example.tracker/secrets/api_token',
    );
    expect(removed.status).toBe(204);
    expect((await server.api('GET', '/api/agents/ada/secrets')).json).toEqual({ secrets: [] });
    expect(server.bodies.join('\n')).not.toContain(canary);
    expect(server.logs.join('\n')).not.toContain(canary);
  });

  it('refuses oversized bodies with 413, declared or streamed', async () => {
    const big = 'x'.repeat(300 * 1024);
    const declared = await server.api('PUT', '/api/providers/nobody/api-key', undefined, {
      raw: JSON.stringify({ value: big }),
      headers: { 'content-type': 'application/json' },
    });
    expect(declared.status).toBe(413);
    expect(declared.json).toMatchObject({ error: { code: 'body_too_large' } });

    // Chunked: no Content-Length, so the server counts as it reads.
    const url = new URL(server.url);
    const status = await new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          method: 'POST',
          path: '/api/agents',
          headers: {
            authorization: `Bearer ${server.token}`,
            'content-type': 'application/json',
            'transfer-encoding': 'chunked',
          },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      for (let i = 0; i < 40; i++) req.write('x'.repeat(16 * 1024));
      req.end();
    });
    expect(status).toBe(413);
  });

  it('refuses a wrong content type and malformed JSON without echoing it', async () => {
    const type = await server.api('POST', '/api/agents', undefined, {
      raw: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(type.status).toBe(415);
    const malformed = await server.api('POST', '/api/agents', undefined, {
      raw: '{"name": "json-canary"',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.text).not.toContain('json-canary');
    expect((await server.api('DELETE', '/api/agents')).status).toBe(405);
  });

  it("records a message and answers 202 at once; the run's event stream carries its reply", async () => {
    const sent = await server.api('POST', '/api/agents/ada/messages', {
      body: 'remember the release is on the 9th',
    });
    expect(sent.status).toBe(202);
    const result = sent.json as {
      run_id: string;
      conversation_id: string;
      message_id: string;
      events: string;
    };
    expect(result).toMatchObject({
      run_id: expect.stringMatching(UUID) as string,
      conversation_id: expect.stringMatching(UUID) as string,
      message_id: expect.stringMatching(UUID) as string,
      status: 'queued',
      events: `/api/runs/${result.run_id}/events`,
      run: `/api/runs/${result.run_id}`,
    });
    expect(sent.headers.get('location')).toBe(`/api/runs/${result.run_id}`);
    expect(sent.json).not.toHaveProperty('reply');

    // The stream named in the answer follows the run to its end: steps, the reply, a final state.
    const stream = await fetch(`${server.url}${result.events.slice(1)}`, {
      headers: { authorization: `Bearer ${server.token}` },
    });
    const seen: { event: string; data: Record<string, unknown> }[] = [];
    for await (const e of sseEvents(stream.body as ReadableStream<Uint8Array>))
      seen.push({ event: e.event, data: JSON.parse(e.data) as Record<string, unknown> });
    expect(seen.find((e) => e.event === 'reply')?.data).toMatchObject({ body: 'Noted.' });
    expect(seen.at(-1)).toMatchObject({
      event: 'state',
      data: { status: 'succeeded', final: true },
    });

    const run = (await server.api('GET', `/api/runs/${result.run_id}`)).json as {
      status: string;
      steps: { kind: string; toolName: string | null; data: Record<string, unknown> | null }[];
    };
    expect(run.steps.map((s) => s.kind)).toEqual([
      'model_request',
      'model_response',
      'tool_call',
      'observation',
      'model_request',
      'model_response',
      'reply',
    ]);
    expect(run.steps[0]?.data?.['offered']).toContain('remember');
    expect(run.steps[0]?.data?.['estimate']).toMatchObject({ total: expect.any(Number) as number });

    const messages = (
      await server.api('GET', `/api/conversations/${result.conversation_id}/messages`)
    ).json as { messages: { direction: string; body: string; actor: string }[] };
    expect(messages.messages.map((m) => m.direction)).toEqual(['inbound', 'outbound']);
    // The first token is named for who started Mesh, and that name labels what it did.
    const { firstOperatorName } = await import('../../src/app/operators/operator-auth.ts');
    expect(messages.messages[0]?.actor).toMatch(
      new RegExp(`^operator:${firstOperatorName()}:[0-9a-f]{8}$`),
    );

    const runs = (await server.api('GET', '/api/agents/ada/runs?limit=5')).json as {
      runs: { run_id: string }[];
    };
    expect(runs.runs[0]?.run_id).toBe(result.run_id);
    expect((await server.api('GET', '/api/agents/ada/runs?limit=5000')).status).toBe(400);
    const conversations = (await server.api('GET', '/api/agents/ada/conversations')).json as {
      conversations: { id: string; messages: number }[];
    };
    expect(conversations.conversations[0]).toMatchObject({
      id: result.conversation_id,
      messages: 2,
    });

    // Continuing the conversation of another agent is refused.
    const other = await server.api('POST', '/api/agents/grace/messages', {
      body: 'hi',
      conversation_id: result.conversation_id,
    });
    expect(other.status).toBe(404);
    const notARun = await server.api('GET', '/api/runs/not-a-uuid');
    expect(notARun.status).toBe(400);
    expect(notARun.json).toMatchObject({ error: { code: 'invalid_input', field: 'path.run' } });
    expect((await server.api('GET', '/api/runs/00000000')).status).toBe(404);
  });

  it('waits for the reply only when asked (?wait= or Prefer: wait=), within a bound it names', async () => {
    const waited = await server.api('POST', '/api/agents/ada/messages?wait=60', {
      body: 'remember the freeze starts Monday',
    });
    expect(waited.status).toBe(200);
    expect(waited.json).toMatchObject({ status: 'succeeded', reason: null, reply: 'Noted.' });
    expect(waited.headers.get('preference-applied')).toBeNull();

    const preferred = await server.api(
      'POST',
      '/api/agents/ada/messages',
      { body: 'remember lunch is at noon' },
      { headers: { prefer: 'respond-async, wait=999' } },
    );
    expect(preferred.status).toBe(200);
    expect(preferred.json).toMatchObject({ status: 'succeeded', reply: 'Noted.' });
    // A hint past the bound is cut to it, and the answer says so.
    expect(preferred.headers.get('preference-applied')).toBe('wait=120');

    for (const wait of ['121', '-1', '1.5', 'soon', '']) {
      const refused = await server.api('POST', `/api/agents/ada/messages?wait=${wait}`, {
        body: 'never recorded',
      });
      expect(refused.status).toBe(400);
      expect(refused.json).toMatchObject({
        error: { code: 'invalid_input', field: 'query.wait' },
      });
      expect(refused.text).toMatch(/field `wait` must be (<= 120|>= 0|integer)/);
    }
    // A refused request recorded nothing.
    const { rows } = await server.mesh.db.query<{ n: number }>(
      `select count(*)::int as n from messages where body = 'never recorded'`,
    );
    expect(rows[0]?.n).toBe(0);
  });

  it('serves metrics to scrape (operator token only): the queue, runs, tool calls, the event loop', async () => {
    // A turn with a tool call, driven by this server's worker.
    const sent = await server.api('POST', '/api/agents/ada/messages?wait=60', {
      body: 'remember the zebra crossing',
    });
    expect(sent.status).toBe(200);
    expect((await server.api('GET', '/api/metrics', undefined, { token: null })).status).toBe(401);
    const scraped = await server.api('GET', '/api/metrics');
    expect(scraped.status).toBe(200);
    expect(scraped.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const value = (series: string): number => {
      const line = scraped.text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
    };
    expect(value('mesh_runs_queued')).toBe(0);
    expect(value('mesh_run_queue_wait_seconds_count{kind="turn"}')).toBeGreaterThan(0);
    expect(
      value('mesh_run_duration_seconds_count{kind="turn",status="succeeded"}'),
    ).toBeGreaterThan(0);
    expect(
      value(
        'mesh_tool_call_duration_seconds_count{tool="remember",class="query",outcome="result"}',
      ),
    ).toBeGreaterThan(0);
    expect(value('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    // The pool's gauges exist where there is a pool (PostgreSQL), from its first scrape on.
    if (server.mesh.db.kind === 'postgres') {
      expect(value('mesh_db_pool_waiting')).toBeGreaterThanOrEqual(0);
      expect(value('mesh_db_pool_connections{state="idle"}')).toBeGreaterThanOrEqual(0);
    }
    // Identifiers and counts only: no message text reaches a label.
    expect(scraped.text).not.toContain('zebra');
  });

  it('never offers a tool an agent opted out of, in any recorded model request', async () => {
    expect(
      (await server.api('PUT', '/api/agents/ada/tools/recall', { enabled: false })).status,
    ).toBe(204);
    expect(
      (await server.api('PUT', '/api/agents/ada/tools/no_such_tool', { enabled: false })).status,
    ).toBe(404);
    for (const body of ['remember apples are red', 'what is up', 'remember pears are green']) {
      expect((await server.api('POST', '/api/agents/ada/messages?wait=60', { body })).status).toBe(
        200,
      );
    }
    const { rows } = await server.mesh.db.query<{
      offered: string[];
      withheld: { name: string; reason: string }[];
    }>(
      `select s.data->'offered' as offered, s.data->'withheld' as withheld
       from run_steps s join runs r on r.id = s.run_id join agents a on a.id = r.agent_id
       where a.name = 'ada' and s.kind = 'model_request'
         and s.started_at > (select updated_at from agent_tools t where t.agent_id = a.id and t.tool_name = 'recall')`,
    );
    expect(rows.length).toBeGreaterThanOrEqual(5);
    for (const row of rows) {
      expect(row.offered).not.toContain('recall');
      expect(row.withheld).toContainEqual({ name: 'recall', reason: 'disabled for this agent' });
    }
    const view = await server.api('GET', '/api/agents/ada/packages');
    const memory = (
      view.json as { packages: { id: string; tools: { name: string; enabled: boolean }[] }[] }
    ).packages.find((p) => p.id === 'mesh.memory');
    expect(memory?.tools.find((t) => t.name === 'recall')?.enabled).toBe(false);
    await server.api('PUT', '/api/agents/ada/tools/recall', { enabled: true });
  });

  it('limits a package to audiences, and refuses an unknown audience', async () => {
    const set = await server.api('PUT', '/api/agents/ada/packages/mesh.memory/audiences', {
      audiences: ['shared'],
    });
    expect(set.status).toBe(204);
    const view = (await server.api('GET', '/api/agents/ada/packages')).json as {
      packages: {
        id: string;
        audiences: string[] | null;
        tools: { offer: Record<string, unknown> }[];
      }[];
    };
    const memory = view.packages.find((p) => p.id === 'mesh.memory');
    expect(memory?.audiences).toEqual(['shared']);
    expect(memory?.tools[0]?.offer).toEqual({
      direct: 'not offered in direct conversations',
      shared: null,
    });
    const bad = await server.api('PUT', '/api/agents/ada/packages/mesh.memory/audiences', {
      audiences: ['everyone'],
    });
    expect(bad.status).toBe(400);
    await server.api('PUT', '/api/agents/ada/packages/mesh.memory/audiences', { audiences: null });
  });

  it('adds providers with write-only keys', async () => {
    const key = `sk-canary-${Math.random().toString(36).slice(2)}`;
    const added = await server.api('POST', '/api/providers', {
      name: 'router',
      kind: 'openai_compatible',
      base_url: 'http://127.0.0.1:9/v1',
      api_key: key,
    });
    expect(added.status).toBe(201);
    expect(added.json).toMatchObject({ name: 'router', api_key: { present: true, version: 1 } });
    const rotated = await server.api('PUT', '/api/providers/router/api-key', { value: `${key}-2` });
    expect(rotated.json).toMatchObject({ present: true, version: 2 });
    const withCreds = await server.api('POST', '/api/providers', {
      name: 'leaky',
      kind: 'openai_compatible',
      base_url: `https://user:${key}@example.test/v1`,
      api_key: key,
    });
    expect(withCreds.status).toBe(400);
    const scripted = await server.api('POST', '/api/providers', {
      name: 'scripts',
      kind: 'scripted',
      script: { fallback: { content: 'hi' } },
    });
    expect(scripted.status).toBe(201);
    const badScript = await server.api('POST', '/api/providers', {
      name: 'scripts2',
      kind: 'scripted',
      script: { nonsense: true },
    });
    expect(badScript.status).toBe(400);
    const list = await server.api('GET', '/api/providers');
    expect(list.text).toContain('router');
    expect(server.bodies.join('\n')).not.toContain(key);
    expect(server.logs.join('\n')).not.toContain(key);
  });
});
