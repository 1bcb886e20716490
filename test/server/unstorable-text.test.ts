import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { meshApp } from '../../src/server/server.ts';
import type { Db } from '../../src/store/db.ts';
import { StoreError } from '../../src/store/db.ts';
import { testDatabases } from '../support/db.ts';
import { signIn, openServerWithAgent, type TestServer } from '../support/server.ts';

/**
 * NUL and unpaired surrogates cannot be stored (PostgreSQL's text and jsonb refuse them), so the
 * HTTP face refuses them wherever a request carries text — a JSON field or field name, a path
 * segment, a query parameter, a form field — with a 400 that names where, never the value. And no
 * 500 carries a database's error text: it answers a generic failure with the request's id.
 */
describe.each(testDatabases())('texts no database stores, on $name', (database) => {
  let server: TestServer;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ server, close } = await openServerWithAgent(database, 'ada'));
  }, 60_000);

  afterAll(async () => {
    await close?.();
  });

  const refusedAt = (res: { status: number; json: unknown; text: string }, field: string) => {
    expect(res.status, res.text).toBe(400);
    expect(res.json).toMatchObject({ error: { code: 'invalid_text', field } });
    expect(res.text).not.toContain('secret-ish');
  };

  it('refuses NUL and lone surrogates in JSON fields, nested fields and field names', async () => {
    const cases: [unknown, string][] = [
      [{ name: 'nul-persona', persona: 'secret-ish\u0000' }, 'body.persona'],
      [{ name: 'surrogate', persona: 'secret-ish\ud800' }, 'body.persona'],
      [{ name: 'low', persona: '\udc00secret-ish' }, 'body.persona'],
      [{ name: 'nul\u0000name' }, 'body.name'],
      [{ name: 'key', 'per\u0000sona': 'x' }, 'body'],
    ];
    for (const [body, field] of cases) {
      refusedAt(await server.api('POST', '/api/agents', body), field);
    }
    // A pair is a character, not a lone surrogate: this one is stored and read back whole.
    const ok = await server.api('POST', '/api/agents', {
      name: 'emoji',
      persona: 'hi \ud83d\ude00',
    });
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ persona: 'hi \ud83d\ude00' });
    const config = await server.api('PUT', '/api/agents/ada/packages/tracker/config/page_size', {
      value: 'secret-ish\u0000',
    });
    refusedAt(config, 'body.value');
    const nested = await server.api('PUT', '/api/agents/ada/mcp/x/scopes', {
      audiences: null,
      conversation_ids: ['00000000-0000-4000-8000-000000000000', 'secret-ish\ud800'],
    });
    refusedAt(nested, 'body.conversation_ids.1');
    const agents = await server.api('GET', '/api/agents');
    const names = (agents.json as { agents: { name: string }[] }).agents.map((a) => a.name);
    expect(names.sort()).toEqual(['ada', 'emoji']);
  });

  it('refuses them in escaped JSON text, path segments and query parameters', async () => {
    refusedAt(
      await server.api('POST', '/api/agents', undefined, {
        raw: '{"name": "x", "persona": "secret-ish\\u0000"}',
        headers: { 'content-type': 'application/json' },
      }),
      'body.persona',
    );
    refusedAt(await server.api('GET', '/api/agents/secret-ish%00'), 'path.agent');
    refusedAt(
      await server.api('DELETE', '/api/agents/ada/packages/tracker/config/page%00size'),
      'path.key',
    );
    refusedAt(await server.api('GET', '/api/agents/ada/runs?limit=%00'), 'query.limit');
    refusedAt(await server.api('GET', '/api/agents?x=secret-ish%00'), 'query.x');
  });

  it('refuses them in a UI form field', async () => {
    const { cookie, csrf } = await signIn(server);
    const res = await fetch(`${server.url}agents`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: `csrf=${csrf}&name=formed&persona=secret-ish%00`,
    });
    const text = await res.text();
    expect(res.status).toBe(400);
    expect(text).toContain('form.persona');
    expect(text).not.toContain('secret-ish');
    const agents = await server.api('GET', '/api/agents/formed');
    expect(agents.status).toBe(404);
  });

  it('answers a database failure with a generic error and a request id, never its text', async () => {
    const failing: Db = {
      ...server.mesh.db,
      query: (sql, params) =>
        /from agents/i.test(sql)
          ? Promise.reject(
              new StoreError('database_error', 'invalid byte sequence for encoding "UTF8": 0x00'),
            )
          : server.mesh.db.query(sql, params),
    };
    const logs: string[] = [];
    const app = meshApp(
      { ...server.mesh, db: failing },
      { log: (l) => logs.push(l), version: 't' },
    );
    const res = await app.request('http://mesh.test/api/agents', {
      headers: { authorization: `Bearer ${server.token}` },
    });
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(text).not.toMatch(/UTF8|byte sequence|database/);
    const body = JSON.parse(text) as { error: { code: string; request_id: string } };
    expect(body.error.code).toBe('internal_error');
    expect(body.error.request_id).toMatch(/^[0-9a-f-]{36}$/);
    // The operator finds the cause in the log by the id the answer gave.
    expect(logs.some((l) => l.includes(body.error.request_id) && l.includes('0x00'))).toBe(true);
  });
});
