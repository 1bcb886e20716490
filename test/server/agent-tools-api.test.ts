import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import { signIn, openServerWithAgent, type TestServer } from '../support/server.ts';

interface ToolRow {
  name: string;
  offered: boolean;
  reason: string | null;
  class: string | null;
  origin: string | null;
}

describe.each(testDatabases())("an agent's tools over the API on $name", (database) => {
  let server: TestServer;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ server, close } = await openServerWithAgent(database, 'ada'));
  }, 60_000);

  afterAll(async () => {
    await close?.();
  });

  it('lists what a turn would offer, and what it would withhold with the reason', async () => {
    const res = await server.api('GET', '/api/agents/ada/tools');
    expect(res.status).toBe(200);
    const body = res.json as { agent: string; audience: string; tools: ToolRow[] };
    expect(body).toMatchObject({ agent: 'ada', audience: 'direct' });
    const byName = new Map(body.tools.map((t) => [t.name, t]));
    expect(byName.get('remember')).toMatchObject({
      offered: true,
      reason: null,
      class: 'query',
      origin: 'mesh.memory',
    });
    expect(byName.get('create_github_issue')).toMatchObject({
      offered: false,
      reason: expect.stringContaining('needs secret github_credential') as string,
    });
    // Opting out shows as withheld, with the reason the turn would give.
    await server.api('PUT', '/api/agents/ada/tools/forget', { enabled: false });
    const after = (await server.api('GET', '/api/agents/ada/tools?audience=shared')).json as {
      audience: string;
      tools: ToolRow[];
    };
    expect(after.audience).toBe('shared');
    expect(after.tools.find((t) => t.name === 'forget')).toMatchObject({ offered: false });
  });

  it('calls a tool as the operator: a run of its own, through the executor and ledger', async () => {
    const called = await server.api('POST', '/api/agents/ada/tools/remember/call', {
      arguments: { content: 'the deploy window is Friday' },
    });
    expect(called.status).toBe(200);
    const answer = called.json as {
      run_id: string;
      status: string;
      observation: { kind: string; text: string };
    };
    expect(answer).toMatchObject({ status: 'succeeded', observation: { kind: 'result' } });
    expect(answer.observation.text).toMatch(/^Remembered as memory /);
    const run = (await server.api('GET', `/api/runs/${answer.run_id.slice(0, 8)}`)).json as {
      steps: { kind: string; toolName: string | null }[];
    };
    expect(run.steps.map((s) => s.kind)).toEqual(['tool_call', 'observation']);

    // The arguments' own text is taken too, and refused as a model's would be, naming the field.
    const refused = await server.api('POST', '/api/agents/ada/tools/remember/call', {
      arguments: '{"content":"x","source":"y-canary"}',
    });
    expect(refused.status).toBe(200);
    expect(refused.json).toMatchObject({ observation: { kind: 'invalid_input' } });
    expect(refused.text).toContain('unknown field `source`');
    expect(refused.text).not.toContain('y-canary');
  });

  it('refuses a bad call naming what was wrong', async () => {
    const cases: [string, unknown, number, Record<string, unknown>][] = [
      ['remember', {}, 400, { code: 'invalid_body', field: 'body.arguments' }],
      ['remember', { arguments: 7 }, 400, { code: 'invalid_body', field: 'body.arguments' }],
    ];
    for (const [tool, body, status, error] of cases) {
      const res = await server.api('POST', `/api/agents/ada/tools/${tool}/call`, body);
      expect(res.status, `${tool} ${JSON.stringify(body)}`).toBe(status);
      expect(res.json).toMatchObject({ error });
    }
    // Nested deeper than any walker may recurse (JSON.stringify overflowed at about 4,000 levels
    // in a request's stack): refused by its depth before anything walks it, and no run is made.
    const runsBefore = (await server.api('GET', '/api/runs?agent=ada')).json;
    for (const depth of [101, 5000, 30_000]) {
      const raw = `{"arguments":${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}}`;
      const res = await server.api('POST', '/api/agents/ada/tools/remember/call', undefined, {
        raw,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status, `depth ${depth}`).toBe(400);
      expect(res.json).toMatchObject({
        error: { code: 'invalid_body', field: 'body.arguments' },
      });
      expect(JSON.stringify(res.json)).toContain('nests deeper than 100 levels');
    }
    expect((await server.api('GET', '/api/runs?agent=ada')).json).toEqual(runsBefore);
    expect(server.logs.filter((l) => l.startsWith('error'))).toEqual([]);
    expect(
      (await server.api('POST', '/api/agents/nobody/tools/remember/call', { arguments: {} }))
        .status,
    ).toBe(404);
    const badAudience = await server.api('GET', '/api/agents/ada/tools?audience=group');
    expect(badAudience.status).toBe(400);
    expect(badAudience.json).toMatchObject({ error: { field: 'query.audience' } });
  });

  it('offers the same in the UI: a call form with what a turn is offered, and every run on one page', async () => {
    const { cookie, csrf } = await signIn(server);
    const page = async (path: string) => {
      const res = await fetch(`${server.url}${path}`, { headers: { cookie } });
      return { status: res.status, text: await res.text() };
    };
    const callPage = await page('agents/ada/call');
    expect(callPage.status).toBe(200);
    expect(callPage.text).toContain('<option value="remember"');
    expect(callPage.text).toContain('needs secret github_credential');

    const posted = await fetch(`${server.url}agents/ada/call`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({
        csrf,
        tool: 'remember',
        arguments: '{"content":"from the form"}',
      }).toString(),
    });
    expect(posted.status).toBe(303);
    const runPath = posted.headers.get('location') ?? '';
    expect(runPath).toMatch(/^\/runs\/[0-9a-f-]{36}$/);
    expect((await page(runPath.slice(1))).status).toBe(200);

    const runs = await page('runs?agent=ada&status=succeeded');
    expect(runs.status).toBe(200);
    expect(runs.text).toContain(`href="${runPath}"`);
    expect(runs.text).toContain(`>${runPath.slice('/runs/'.length, '/runs/'.length + 8)}<`);
    const refused = await page('runs?status=bogus');
    expect(refused.status).toBe(400);
    expect(refused.text).not.toContain('bogus');
  });
});
