import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { testDatabases } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { signIn, startTestServer, type TestServer } from '../support/server.ts';
import { scriptedAgent } from '../support/turn.ts';

/**
 * A credential is sent in an HTTP header: one with a line break or a NUL was accepted, and every
 * later request that sent it failed (each chat answered 500). It is refused at capture, on every
 * face, with a typed error naming the field and the fault, never the value; nothing is left half
 * made.
 */
const CANARY = 'cAnArY-credential';
const BAD: readonly [string, RegExp][] = [
  [`${CANARY}\nsecond-line`, /line break/],
  [`${CANARY}\u0000`, /NUL|cannot be stored/],
  [`${CANARY}\u001b[0m`, /control character/],
  [`${CANARY}—dash`, /outside printable ASCII/],
];

describe.each(testDatabases())('credentials refused at capture, on $name', (database) => {
  let server: TestServer;
  let dispose: () => Promise<void>;
  let mcp: FakeMcpServer;

  beforeAll(async () => {
    const opened = await database.open();
    server = await startTestServer(opened.db);
    dispose = () => opened.dispose();
    await scriptedAgent(server.mesh, { fallback: { content: 'Hello.' } }, 'ada');
    mcp = await startFakeMcpServer({ tools: [textTool('search', 'Search')] });
    const added = await server.api('POST', '/api/mcp/providers', {
      slug: 'alpha',
      url: mcp.url,
      allow_loopback_http: true,
    });
    expect(added.status, added.text).toBe(201);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await mcp?.close();
    await dispose?.();
  });

  const providerNames = (res: { json: unknown }) =>
    (res.json as { providers: { name: string }[] }).providers.map((p) => p.name);

  const refused = (
    res: { status: number; json: unknown; text: string },
    field: string,
    why: RegExp,
  ) => {
    expect(res.status, res.text).toBe(400);
    const error = (res.json as { error: { code: string; field: string; message: string } }).error;
    expect(['secret_value_invalid', 'invalid_text']).toContain(error.code);
    expect(error.field.endsWith(field)).toBe(true);
    expect(error.message).toMatch(why);
    expect(res.text).not.toContain(CANARY);
  };

  it('through the API: model, web and workspace keys, a package secret, an MCP token', async () => {
    for (const [value, why] of BAD) {
      refused(
        await server.api('POST', '/api/providers', {
          name: 'router',
          kind: 'openai_compatible',
          base_url: 'https://openrouter.example/api/v1',
          api_key: value,
        }),
        'api_key',
        why,
      );
      refused(
        await server.api('POST', '/api/web/providers', {
          name: 'exa',
          kind: 'exa',
          api_key: value,
        }),
        'api_key',
        why,
      );
      refused(
        await server.api('POST', '/api/workspaces/backends', {
          name: 'cloud',
          kind: 'e2b',
          api_key: value,
        }),
        'api_key',
        why,
      );
      refused(
        await server.api('PUT', '/api/agents/ada/packages/example.tracker/secrets/api_token', {
          value,
        }),
        'value',
        why,
      );
      refused(await server.api('PUT', '/api/agents/ada/mcp/alpha/token', { value }), 'value', why);
    }
    // Nothing was half made, and the MCP server never saw a refused token.
    expect(providerNames(await server.api('GET', '/api/providers'))).not.toContain('router');
    expect((await server.api('GET', '/api/web')).json).toMatchObject({ providers: [] });
    expect((await server.api('GET', '/api/agents/ada/mcp')).json).toMatchObject({
      connections: [],
    });
    expect(mcp.received).toEqual([]);
    // A PEM block is a credential too (a GitHub App's private key), and a plain token is stored.
    const pem =
      '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n';
    const stored = await server.api(
      'PUT',
      '/api/agents/ada/packages/example.tracker/secrets/api_token',
      {
        value: pem,
      },
    );
    expect(stored.status, stored.text).toBe(200);
  });

  it('refuses a PEM-shaped key or token wherever it is sent in a header; a package key may be one', async () => {
    const pem = `-----BEGIN PRIVATE KEY-----\nMIIEv${CANARY}QIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n`;
    const why =
      /^`[a-z_.]*(api_key|value)` holds a line break: a key or token sent in a header is one line of printable text$/;
    const sends: [string, string, Record<string, unknown>, string][] = [
      [
        'POST',
        '/api/providers',
        {
          name: 'router',
          kind: 'openai_compatible',
          base_url: 'https://openrouter.example/api/v1',
          api_key: pem,
        },
        'api_key',
      ],
      ['POST', '/api/web/providers', { name: 'exa', kind: 'exa', api_key: pem }, 'api_key'],
      ['POST', '/api/workspaces/backends', { name: 'cloud', kind: 'e2b', api_key: pem }, 'api_key'],
      ['POST', '/api/browsers/backends', { name: 'steel', kind: 'steel', api_key: pem }, 'api_key'],
      ['PUT', '/api/agents/ada/mcp/alpha/token', { value: pem }, 'value'],
    ];
    for (const [method, path, body, field] of sends) {
      const res = await server.api(method, path, body);
      refused(res, field, why);
      expect((res.json as { error: { message: string } }).error.message, path).toMatch(why);
    }
    expect(providerNames(await server.api('GET', '/api/providers'))).not.toContain('router');
    expect(mcp.received).toEqual([]);
    // A package's credential may be a PEM key: GitHub's app mode signs with it and never sends it.
    const stored = await server.api(
      'PUT',
      '/api/agents/ada/packages/example.tracker/secrets/api_token',
      { value: pem },
    );
    expect(stored.status, stored.text).toBe(200);
  });

  it('never shows a token being tried, when the server that refuses it echoes it', async () => {
    const token = `tok-${CANARY}-0123456789`;
    const echo = createServer((req, res) => {
      req.resume();
      req.on('end', () =>
        res
          .writeHead(400, { 'content-type': 'text/plain' })
          .end(
            `the workspace refused the token ${req.headers.authorization ?? ''} is not valid here`,
          ),
      );
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    try {
      const added = await server.api('POST', '/api/mcp/providers', {
        slug: 'echo',
        url: `http://127.0.0.1:${(echo.address() as AddressInfo).port}/mcp`,
        allow_loopback_http: true,
      });
      expect(added.status, added.text).toBe(201);
      const tried = await server.api('PUT', '/api/agents/ada/mcp/echo/token', { value: token });
      expect(tried.status, tried.text).toBeGreaterThanOrEqual(400);
      expect(tried.text).not.toContain(CANARY);
      expect(tried.text).not.toContain(token.slice(0, 8));
    } finally {
      await new Promise((resolve) => echo.close(resolve));
    }
  });

  it('through the UI: the form comes back with a notice naming the field', async () => {
    const { cookie, csrf } = await signIn(server);
    const posted = await fetch(`${server.url}providers`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({
        csrf,
        name: 'router',
        kind: 'openai_compatible',
        base_url: 'https://openrouter.example/api/v1',
        api_key: `${CANARY}\nsecond-line`,
      }).toString(),
    });
    expect(posted.status).toBe(303);
    const flash = (posted.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const page = await (
      await fetch(`${server.url}providers`, { headers: { cookie: `${cookie}; ${flash}` } })
    ).text();
    expect(page).toContain('api_key');
    expect(page).toContain('holds a line break');
    expect(page).not.toContain(CANARY);
    expect(providerNames(await server.api('GET', '/api/providers'))).not.toContain('router');
  });
});

describe('credentials and texts refused by the CLI', () => {
  const home = mkdtempSync(join(tmpdir(), 'mesh-cli-capture-'));
  const env: NodeJS.ProcessEnv = { ...process.env, MESH_HOME: home };
  delete env['DATABASE_URL'];
  const run = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const saved = process.env;
    process.env = env;
    try {
      const code = await main(argv, { out: (t) => out.push(t), err: (t) => err.push(t) });
      return { code, out: out.join(''), err: err.join('') };
    } finally {
      process.env = saved;
    }
  };

  it('names the field and the fault, as the API does, never the value or the database’s message', async () => {
    const key = join(home, 'key.txt');
    writeFileSync(key, `${CANARY}\nsecond-line\n`);
    const added = await run(
      'providers',
      'add',
      '--name',
      'router',
      '--base-url',
      'https://openrouter.example/api/v1',
      '--api-key-file',
      key,
    );
    expect(added.code).toBe(1);
    // Said with the flag the operator typed, as every refusal of a field is on the command line.
    expect(added.err).toMatch(/--api-key-file holds a line break/);
    expect(added.err).not.toContain(CANARY);

    expect(
      (await run('providers', 'add', '--name', 's', '--scripted', 'examples/demo-script.json'))
        .code,
    ).toBe(0);
    const persona = join(home, 'persona.txt');
    writeFileSync(persona, `${CANARY}\u0000tail`);
    const created = await run(
      'agents',
      'create',
      'ada',
      '--provider',
      's',
      '--model',
      'demo',
      '--persona',
      persona,
    );
    expect(created.code).toBe(1);
    expect(created.err).toContain('--persona holds a NUL character or an unpaired surrogate');
    expect(created.err).not.toMatch(/invalid byte sequence|UTF8|0x00/);
    expect(created.err).not.toContain(CANARY);
    const listed = await run('agents', 'list', '--json');
    expect(JSON.parse(listed.out)).toEqual({ agents: [] });
  }, 60_000);
});
