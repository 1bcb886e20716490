import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertAgent } from '../../src/store/agents.ts';
import { freshPglite } from '../support/db.ts';
import { postForm, signIn, startTestServer, type TestServer } from '../support/server.ts';

/** The operator API of the execution layer: register, grant, list; refusals name the field. */
describe('the workspaces API', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(await freshPglite());
    await insertAgent(server.mesh.db, { id: randomUUID(), name: 'coder' });
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('registers a development backend, grants it with an allowlist and lists it', async () => {
    const refused = await server.api('POST', '/api/workspaces/backends', {
      name: 'dev',
      kind: 'local',
    });
    expect(refused.status).toBe(400);
    expect(refused.text).toMatch(/development only/);
    const added = await server.api('POST', '/api/workspaces/backends', {
      name: 'dev',
      kind: 'local',
      development: true,
    });
    expect(added.status).toBe(201);
    const badHost = await server.api('PUT', '/api/agents/coder/workspace-backend', {
      backend: 'dev',
      allow_hosts: ['github.com', 'not a host'],
    });
    expect(badHost.status).toBe(400);
    expect(badHost.text).toContain('allowed host 2');
    const granted = await server.api('PUT', '/api/agents/coder/workspace-backend', {
      backend: 'dev',
      allow_hosts: ['github.com', '127.0.0.1:8080'],
    });
    expect(granted.status).toBe(200);
    const listed = await server.api('GET', '/api/workspaces');
    expect(listed.json).toMatchObject({
      backends: [{ name: 'dev', kind: 'local', development: true, api_key: null }],
      grants: [{ agent: 'coder', backend: 'dev', egress: ['github.com', '127.0.0.1:8080'] }],
      workspaces: [],
    });
    // Revoking says whether there was a grant to revoke.
    for (const revoked of [true, false]) {
      const answer = await server.api('DELETE', '/api/agents/coder/workspace-backend');
      expect([answer.status, answer.json]).toEqual([200, { agent: 'coder', revoked }]);
    }
  });

  it("a UI form is refused by the operation, in the form's words: the field, not a CLI flag", async () => {
    const session = await signIn(server);
    const posted = await postForm(server, session, 'workspaces/backends', {
      name: 'dev-form',
      kind: 'local',
    });
    expect(posted.status).toBe(303);
    const flash = /mesh_flash=([^;]*)/.exec(posted.headers.get('set-cookie') ?? '')?.[1] ?? '';
    const notice = JSON.parse(Buffer.from(flash, 'base64url').toString('utf8')) as {
      kind: string;
      text: string;
      field?: string;
    };
    expect(notice).toMatchObject({ kind: 'error', field: 'development' });
    expect(notice.text).toContain('`development`');
    expect(notice.text).not.toContain('--dev');
    expect((await server.api('GET', '/api/workspaces')).json).toMatchObject({
      backends: [{ name: 'dev' }],
    });
  });

  it('stores an e2b key write-only and refuses plain http off loopback', async () => {
    const http = await server.api('POST', '/api/workspaces/backends', {
      name: 'e2b-http',
      kind: 'e2b',
      api_url: 'http://e2b.example.com',
      api_key: 'e2b_secretkey_0001',
      development: true,
    });
    expect(http.status).toBe(400);
    expect(http.text).not.toContain('e2b_secretkey_0001');
    const added = await server.api('POST', '/api/workspaces/backends', {
      name: 'e2b',
      kind: 'e2b',
      api_key: 'e2b_secretkey_0001',
    });
    expect(added.status).toBe(201);
    const listed = await server.api('GET', '/api/workspaces');
    expect(listed.text).not.toContain('e2b_secretkey_0001');
    const backends = (listed.json as { backends: { name: string; api_key: unknown }[] }).backends;
    expect(backends.find((b) => b.name === 'e2b')?.api_key).toEqual({ present: true });
    expect((await server.api('DELETE', '/api/workspaces/backends/e2b')).status).toBe(204);
    expect((await server.api('DELETE', '/api/workspaces/backends/e2b')).status).toBe(404);
  });

  it('shows backends, grants and live workspaces on the UI page, and grants from its form', async () => {
    const { cookie, csrf } = await signIn(server);
    const form = new URLSearchParams({
      csrf,
      agent: 'coder',
      backend: 'dev',
      allow_hosts: 'api.github.com\ngithub.com',
    });
    const posted = await fetch(`${server.url}workspaces/grants`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
    });
    expect(posted.status).toBe(303);
    const page = await (await fetch(`${server.url}workspaces`, { headers: { cookie } })).text();
    expect(page).toContain('<h1>Workspaces</h1>');
    expect(page).toMatch(/data-backend="dev"[\s\S]*development only/);
    expect(page).toMatch(/data-grant="coder"[\s\S]*api\.github\.com, github\.com/);
    expect(page).toContain('No live workspace.');
    expect(page).not.toContain('e2b_secretkey_0001');
  });
});
