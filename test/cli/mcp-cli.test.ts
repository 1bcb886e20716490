import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshMeshHome,
  meshInProcess as mesh,
  removeMeshHome,
  serveIn,
  type ServeProcess,
} from '../support/cli.ts';
import { setEnv } from '../support/env.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';

const home = freshMeshHome('mesh-mcp-cli-');
const TOKEN = 'mcp-cli-token-canary-42';

/*
 * The commands run beside a `mesh serve` holding the home, as an operator's do: each is sent to
 * the server over its socket instead of opening the embedded database itself (a second apiece).
 */
describe('mesh mcp and tools call on a remote tool', () => {
  let server: FakeMcpServer;
  let serve: ServeProcess;
  let restoreEnv: () => void = () => undefined;

  beforeAll(async () => {
    restoreEnv = setEnv({ MESH_HOME: home, DATABASE_URL: '' });
    serve = serveIn(home, '--port', '0');
    await serve.waitFor(/^URL: /);
    server = await startFakeMcpServer({
      acceptedTokens: new Set([TOKEN]),
      tools: [
        textTool('search', 'Search the index'),
        textTool('create', 'Create a record'),
        // As a server on the TypeScript SDK v1 lists it: a draft-07 schema, open to other fields.
        textTool('echo', 'Echo', {
          inputSchema: {
            $schema: 'http://json-schema.org/draft-07/schema#',
            type: 'object',
            properties: { message: { type: 'string' } },
            required: ['message'],
          },
        }),
        textTool('files.read', 'A name model providers refuse'),
      ],
      call: (name, args) =>
        name === 'echo' && args['message'] === 'boom'
          ? { content: [{ type: 'text', text: 'it broke' }], isError: true }
          : { content: [{ type: 'text', text: `${name} got ${JSON.stringify(args)}` }] },
    });
  });

  afterAll(async () => {
    await serve.stop();
    await server.close();
    restoreEnv();
    await removeMeshHome(home);
  });

  it('adds a provider, connects an agent with a token file, shows the catalog and calls a tool', async () => {
    expect((await mesh('agents', 'create', 'ada')).code).toBe(0);
    const refused = await mesh('mcp', 'add', 'idx', server.url);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain('--allow-loopback-http');
    expect((await mesh('mcp', 'add', 'idx', server.url, '--allow-loopback-http')).code).toBe(0);

    const tokenFile = join(home, 'token.txt');
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const connected = await mesh(
      'mcp',
      'connect',
      '--agent',
      'ada',
      '--provider',
      'idx',
      '--token-file',
      tokenFile,
    );
    expect(connected.out).toContain('Connected ada to idx: 4 tools, 4 usable (1 page)');

    const catalog = await mesh('mcp', 'catalog', '--agent', 'ada', '--provider', 'idx', '--json');
    const view = JSON.parse(catalog.out) as {
      tools: {
        tool: string;
        name: string;
        status: string;
        semantics: string;
        usable: boolean;
        description: string;
        input_schema: { $schema?: string };
      }[];
    };
    // The API's shape: the connection, and every field the API gives a tool (none dropped).
    expect(JSON.parse(catalog.out)).toMatchObject({
      connection: { provider: 'idx', auth: 'bearer' },
    });
    expect(Object.keys(view.tools[0] ?? {})).toEqual(
      expect.arrayContaining(['legacy_query_marked', 'usable', 'withheld_reason', 'input_schema']),
    );
    const dotted = view.tools.find((t) => t.name === 'files.read');
    expect(dotted?.tool).toMatch(/^idx__files_read_[0-9a-f]{8}$/);
    expect(view.tools.map((t) => [t.name, t.status, t.semantics, t.usable])).toEqual([
      ['create', 'new', 'effect', true],
      ['echo', 'new', 'effect', true],
      ['files.read', 'new', 'effect', true],
      ['search', 'new', 'effect', true],
    ]);
    const echo = view.tools.find((t) => t.name === 'echo');
    expect(echo?.description).toBe('Echo');
    expect(echo?.input_schema.$schema).toBe('http://json-schema.org/draft-07/schema#');

    // The draft-07 tool is callable, takes a field its open schema allows, and its server error
    // is a tool error: non-zero, and kind tool_error in JSON.
    const echoed = await mesh(
      'tools',
      'call',
      'idx__echo',
      '--agent',
      'ada',
      '--args',
      '{"message":"hi","extra":1}',
    );
    expect(echoed.code).toBe(0);
    expect(echoed.out.trim()).toBe('echo got {"message":"hi","extra":1}');
    const broke = await mesh(
      'tools',
      'call',
      'idx__echo',
      '--agent',
      'ada',
      '--args',
      '{"message":"boom"}',
      '--json',
    );
    expect(broke.code).not.toBe(0);
    expect(JSON.parse(broke.out)).toMatchObject({
      run_id: expect.stringMatching(/^[0-9a-f-]{36}$/) as string,
      observation: { kind: 'tool_error', text: 'it broke' },
    });
    const mapped = await mesh(
      'tools',
      'call',
      dotted?.tool ?? '',
      '--agent',
      'ada',
      '--args',
      '{}',
    );
    expect(mapped.out.trim()).toBe('files.read got {}');

    const called = await mesh(
      'tools',
      'call',
      'idx__search',
      '--agent',
      'ada',
      '--args',
      '{"q":"bug"}',
    );
    expect(called.code).toBe(0);
    expect(called.out.trim()).toBe('search got {"q":"bug"}');
    expect(server.received.find((r) => r.tool === 'search')?.headers.authorization).toBe(
      `Bearer ${TOKEN}`,
    );

    // A definition changed on the server: the check names it in text, as --json lists it.
    const at = server.state.tools.findIndex((t) => t.name === 'search');
    server.state.tools[at] = textTool('search', 'Search, and now also delete what it finds');
    const checked = await mesh('mcp', 'check', '--agent', 'ada', '--provider', 'idx');
    expect(checked.code).toBe(0);
    expect(checked.out).toContain(
      '  changed: search (called as effects until reviewed: mesh mcp review)',
    );
    expect(checked.out).not.toContain('added:');

    expect(
      (await mesh('mcp', 'exclude', '--agent', 'ada', '--provider', 'idx', 'idx__create')).code,
    ).toBe(0);
    const after = await mesh('mcp', 'catalog', '--agent', 'ada', '--provider', 'idx');
    expect(after.out).toMatch(
      /idx__create\s+new\s+effect\s+[0-9a-f]{16}\s+withheld: excluded on the idx connection/,
    );

    expect((await mesh('mcp', 'disconnect', '--agent', 'ada', '--provider', 'idx')).code).toBe(0);
    const gone = await mesh('tools', 'call', 'idx__search', '--agent', 'ada', '--args', '{}');
    expect(gone.code).toBe(1);
    expect(gone.out).toContain('There is no tool named "idx__search"');

    const everything = [connected, catalog, called, after, gone]
      .map((r) => r.out + r.err)
      .join('\n');
    expect(everything).not.toContain(TOKEN);
  }, 60_000);

  it('deletes what it created: an agent (with --yes), a provider, a remote server', async () => {
    const script = join(home, 'script.json');
    writeFileSync(script, JSON.stringify({ fallback: { content: 'hi' } }));
    expect((await mesh('providers', 'add', '--name', 'brief', '--scripted', script)).code).toBe(0);
    expect(
      (await mesh('agents', 'create', 'brief', '--provider', 'brief', '--model', 'm')).code,
    ).toBe(0);
    expect((await mesh('mcp', 'add', 'brief', 'https://mcp.example/mcp')).code).toBe(0);

    const inUse = await mesh('providers', 'delete', 'brief');
    expect(inUse.code).toBe(1);
    expect(inUse.err).toContain('used by 1 agent (brief)');
    const unconfirmed = await mesh('agents', 'delete', 'brief');
    expect(unconfirmed.code).toBe(2);
    expect(unconfirmed.err).toContain('--yes');

    expect((await mesh('agents', 'delete', 'brief', '--yes')).code).toBe(0);
    // The provider can go once its agent has gone.
    expect((await mesh('providers', 'delete', 'brief')).code).toBe(0);
    expect((await mesh('mcp', 'remove', 'brief')).code).toBe(0);
    expect(JSON.parse((await mesh('providers', 'list', '--json')).out)).toEqual({ providers: [] });
  }, 60_000);
});
