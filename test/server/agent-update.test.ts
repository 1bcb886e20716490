import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import { signIn, openServerWithAgent, type TestServer } from '../support/server.ts';

describe.each(testDatabases())('changing an agent after it was created, on $name', (database) => {
  let server: TestServer;
  let close: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    ({ server, close } = await openServerWithAgent(database, 'ada'));
  }, 60_000);

  afterAll(async () => {
    await close?.();
  });

  it('changes the model, persona and image input over the API, leaving the rest as it was', async () => {
    // GET also lists the agent's open commitments (none here); the rest is the agent itself.
    const { commitments, ...before } = (await server.api('GET', '/api/agents/ada')).json as Record<
      string,
      unknown
    >;
    expect(commitments).toEqual([]);
    const changed = await server.api('PATCH', '/api/agents/ada', {
      model: 'model-two',
      persona: 'You are terse.',
      image_input: true,
    });
    expect(changed.status).toBe(200);
    expect(changed.json).toEqual({
      ...before,
      model: 'model-two',
      persona: 'You are terse.',
      image_input: true,
    });
    expect((await server.api('GET', '/api/agents/ada')).json).toEqual({
      ...(changed.json as object),
      commitments: [],
    });
    // An empty persona clears it; the model stays.
    const cleared = await server.api('PATCH', '/api/agents/ada', { persona: '' });
    expect(cleared.json).toMatchObject({ persona: null, model: 'model-two' });
  });

  it('refuses a bad change naming the field, and changes nothing', async () => {
    const before = (await server.api('GET', '/api/agents/ada')).json;
    const cases: [unknown, number, Record<string, unknown>][] = [
      [{ image_input: 'yes' }, 400, { code: 'invalid_body', field: 'body.image_input' }],
      [{ colour: 'red' }, 400, { code: 'invalid_body', field: 'body.colour' }],
      [{ model: '' }, 400, { code: 'invalid_body', field: 'body.model' }],
      [{}, 400, { code: 'invalid_agent' }],
      [{ provider: 'nope', model: 'm' }, 404, { code: 'provider_not_found' }],
      [{ agent: 'grace' }, 400, { code: 'invalid_body', field: 'body.agent' }],
    ];
    for (const [body, status, error] of cases) {
      const res = await server.api('PATCH', '/api/agents/ada', body);
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(res.json).toMatchObject({ error });
    }
    expect((await server.api('PATCH', '/api/agents/nobody', { model: 'm' })).status).toBe(404);
    expect((await server.api('GET', '/api/agents/ada')).json).toEqual(before);
  });

  it('changes them from the Settings tab, the form showing what is set', async () => {
    const { cookie, csrf } = await signIn(server);
    const page = await (
      await fetch(`${server.url}agents/ada/settings`, { headers: { cookie } })
    ).text();
    expect(page).toContain('action="/agents/ada/settings"');
    expect(page).toContain('value="model-two"');
    const posted = await fetch(`${server.url}agents/ada/settings`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({
        csrf,
        model: 'model-three',
        persona: 'Answer in French.',
      }).toString(),
    });
    expect(posted.status).toBe(303);
    expect(posted.headers.get('location')).toBe('/agents/ada/settings');
    expect((await server.api('GET', '/api/agents/ada')).json).toMatchObject({
      model: 'model-three',
      persona: 'Answer in French.',
      image_input: false,
    });
  });
});
