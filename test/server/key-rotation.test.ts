import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import { openServerWithAgent, postForm, signIn, type TestServer } from '../support/server.ts';
import { startWebFake, type WebFake } from '../support/web-fakes/index.ts';

const OLD_KEY = 'exa-old-key-0123456789abcdef';
const NEW_KEY = 'exa-new-key-fedcba9876543210';

/*
 * A registered backend's key replaced in place, the same operation for each family: the vendor
 * (a loopback fake of Exa's API that accepts only the new key) refuses calls until the key is
 * replaced, and serves the next one after; the answer and the refusals never carry a key.
 */
describe.each(testDatabases())('replacing a backend key on $name', (database) => {
  let server: TestServer;
  let close: (() => Promise<void>) | undefined;
  let exa: WebFake;

  beforeAll(async () => {
    exa = await startWebFake('exa', { apiKey: NEW_KEY });
    ({ server, close } = await openServerWithAgent(database, 'scout'));
    const added = await server.api('POST', '/api/web/providers', {
      name: 'exa',
      kind: 'exa',
      api_key: OLD_KEY,
      base_url: exa.baseUrl,
      allow_loopback_http: true,
    });
    expect(added.status).toBe(201);
    expect((await server.api('PUT', '/api/agents/scout/web-providers/exa')).status).toBe(200);
  }, 60_000);

  afterAll(async () => {
    await close?.();
    await exa?.close();
  });

  const search = async () =>
    (
      await server.api('POST', '/api/agents/scout/tools/web_search/call', {
        arguments: { query: 'deploy windows' },
      })
    ).json as { observation: { kind: string } };

  it("replaces a web provider's key: the next call uses the new one", async () => {
    expect((await search()).observation.kind).not.toBe('result');
    const rotated = await server.api('PUT', '/api/web/providers/exa/api-key', { value: NEW_KEY });
    expect(rotated.status).toBe(200);
    expect(rotated.json).toMatchObject({ name: 'exa', present: true, version: 2 });
    expect(rotated.text).not.toContain(NEW_KEY);
    // The fake serves only the new key: a result is the new key at work.
    expect((await search()).observation.kind).toBe('result');
  });

  it('refuses a key for what takes none, or a backend that is not there, echoing no key', async () => {
    const box = await server.api('POST', '/api/workspaces/backends', {
      name: 'box',
      kind: 'local',
      development: true,
    });
    expect(box.status).toBe(201);
    const cases: [string, unknown, number, string][] = [
      ['/api/web/providers/nope/api-key', { value: NEW_KEY }, 404, 'web_provider_not_found'],
      ['/api/workspaces/backends/nope/api-key', { value: NEW_KEY }, 404, 'backend_not_found'],
      ['/api/providers/nope/api-key', { value: NEW_KEY }, 404, 'provider_not_found'],
      ['/api/web/providers/exa/api-key', { value: '' }, 400, 'invalid_body'],
      ['/api/web/providers/exa/api-key', { value: '   ' }, 400, 'secret_value_invalid'],
      ['/api/web/providers/exa/api-key', { key: NEW_KEY }, 400, 'invalid_body'],
    ];
    for (const [path, body, status, code] of cases) {
      const res = await server.api('PUT', path, body);
      expect(res.status, path).toBe(status);
      expect(res.json).toMatchObject({ error: { code } });
      expect(res.text).not.toContain(NEW_KEY);
    }
    // A local backend and a scripted model provider take no key.
    const local = await server.api('PUT', '/api/workspaces/backends/box/api-key', {
      value: NEW_KEY,
    });
    expect(local.status).toBe(400);
    expect(local.json).toMatchObject({ error: { code: 'invalid_provider' } });
    const agent = (await server.api('GET', '/api/agents/scout')).json as {
      model_provider_id: string;
    };
    const providers = (await server.api('GET', '/api/providers')).json as {
      providers: { id: string; name: string }[];
    };
    const scripted = providers.providers.find((p) => p.id === agent.model_provider_id);
    const noKey = await server.api('PUT', `/api/providers/${scripted?.name}/api-key`, {
      value: NEW_KEY,
    });
    expect(noKey.status).toBe(400);
    expect(noKey.json).toMatchObject({ error: { code: 'invalid_provider' } });
  });

  it('replaces them from the Web and Workspaces pages too, the key never shown back', async () => {
    const { cookie, csrf } = await signIn(server);
    const page = await (await fetch(`${server.url}web`, { headers: { cookie } })).text();
    expect(page).toContain('action="/web/providers/exa/key"');
    const posted = await fetch(`${server.url}web/providers/exa/key`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ csrf, value: NEW_KEY }).toString(),
    });
    expect(posted.status).toBe(303);
    expect(await posted.text()).not.toContain(NEW_KEY);
    // The form made version 3: the next replacement is version 4.
    const next = await server.api('PUT', '/api/web/providers/exa/api-key', { value: NEW_KEY });
    expect(next.json).toMatchObject({ version: 4 });
    expect((await search()).observation.kind).toBe('result');

    // The other per-provider and per-backend forms on those pages reach their routes too.
    const form = (path: string, fields: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ csrf, ...fields }).toString(),
      });
    expect((await form('web/providers/exa/ceiling', { max_calls_per_run: '7' })).status).toBe(303);
    const web = (await server.api('GET', '/api/web')).json as {
      providers: { name: string; max_calls_per_run: number }[];
    };
    expect(web.providers.find((p) => p.name === 'exa')?.max_calls_per_run).toBe(7);
    expect((await form('workspaces/backends/box/delete')).status).toBe(303);
    const spaces = (await server.api('GET', '/api/workspaces')).json as {
      backends: { name: string }[];
    };
    expect(spaces.backends.map((b) => b.name)).not.toContain('box');
  });

  it("replaces a browser backend's key by the same operation, from the API, the CLI's group and its page", async () => {
    const added = await server.api('POST', '/api/browsers/backends', {
      name: 'steel',
      kind: 'steel',
      api_key: OLD_KEY,
    });
    expect(added.status).toBe(201);
    const rotated = await server.api('PUT', '/api/browsers/backends/steel/api-key', {
      value: NEW_KEY,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.json).toMatchObject({ name: 'steel', present: true, version: 2 });
    expect(rotated.text).not.toContain(NEW_KEY);
    const listed = (await server.api('GET', '/api/browsers')).json as {
      backends: { name: string; api_key: { present: boolean } | null }[];
    };
    expect(listed.backends.find((b) => b.name === 'steel')?.api_key).toEqual({ present: true });
    // A local browser takes no key; a backend that is not there is not found.
    expect(
      (
        await server.api('POST', '/api/browsers/backends', {
          name: 'here',
          kind: 'local',
          development: true,
        })
      ).status,
    ).toBe(201);
    const local = await server.api('PUT', '/api/browsers/backends/here/api-key', {
      value: NEW_KEY,
    });
    expect([local.status, local.json]).toMatchObject([
      400,
      { error: { code: 'invalid_provider' } },
    ]);
    const missing = await server.api('PUT', '/api/browsers/backends/nope/api-key', {
      value: NEW_KEY,
    });
    expect([missing.status, missing.json]).toMatchObject([
      404,
      { error: { code: 'backend_not_found' } },
    ]);
    // The Browsers page offers the same replacement for a vendor backend, never showing the key.
    const { cookie, csrf } = await signIn(server);
    const page = await (await fetch(`${server.url}browsers`, { headers: { cookie } })).text();
    expect(page).toContain('action="/browsers/backends/steel/key"');
    expect(page).not.toContain('action="/browsers/backends/here/key"');
    const posted = await postForm(server, { cookie, csrf }, 'browsers/backends/steel/key', {
      value: OLD_KEY,
    });
    expect(posted.status).toBe(303);
    // The form made version 3: the next replacement is version 4.
    const next = await server.api('PUT', '/api/browsers/backends/steel/api-key', {
      value: NEW_KEY,
    });
    expect(next.json).toMatchObject({ version: 4 });
  });
});
