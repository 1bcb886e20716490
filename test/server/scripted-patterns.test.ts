import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';

/*
 * Issue 12 item 4: a scripted provider's rule patterns are operator input run by a backtracking
 * engine. An unsafe one is refused when the provider is captured, naming the rule and never
 * echoing the pattern; a safe one still works.
 */
describe.each(testDatabases())('scripted provider patterns on $name', (database) => {
  let server: TestServer;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const opened = await database.open();
    server = await startTestServer(opened.db);
    dispose = () => opened.dispose();
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await dispose?.();
  });

  const script = (match: string) => ({
    rules: [
      { match: 'hello', rounds: [{ content: 'Hi.' }] },
      { match, rounds: [{ content: 'Matched $1.' }] },
    ],
  });

  it('refuses a catastrophic pattern at capture, naming the rule', async () => {
    for (const match of ['^(a+)+$', '(x|x)*y', '(.*)(.*)canary', 'a(?=b)', '(a)\\1']) {
      const res = await server.api('POST', '/api/providers', {
        name: 'stall',
        kind: 'scripted',
        script: script(match),
      });
      expect(res.status, match).toBe(400);
      expect(res.json).toMatchObject({ error: { code: 'invalid_script' } });
      expect(res.text).toContain('rules[1].match');
      expect(res.text).not.toContain(match.replaceAll('\\', '\\\\'));
    }
    const { rows } = await server.mesh.db.query(
      "select 1 from model_providers where name = 'stall'",
    );
    expect(rows).toHaveLength(0);
  });

  it('keeps safe patterns working', async () => {
    const added = await server.api('POST', '/api/providers', {
      name: 'safe',
      kind: 'scripted',
      script: script('use (\\w+) (\\S+)$'),
    });
    expect(added.status).toBe(201);
    expect(
      (await server.api('POST', '/api/agents', { name: 'ada', provider: 'safe', model: 'm' }))
        .status,
    ).toBe(201);
    const sent = await server.api('POST', '/api/agents/ada/messages?wait=60', {
      body: 'use tea cups',
    });
    expect(sent.json).toMatchObject({ status: 'succeeded', reply: 'Matched tea.' });
  });
});
