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
import { testDatabases } from '../support/db.ts';
import {
  callAsOperator,
  connectOverApi,
  expectEveryToolAccountedFor,
  type CatalogTool,
} from '../support/interop.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startThirdPartyMcpServer, type ThirdPartyMcpServer } from '../support/third-party-mcp.ts';

/*
 * Mesh against MCP servers nobody on this project wrote, installed as dev dependencies and
 * started as their packages ship them, on loopback: the reference server
 * (@modelcontextprotocol/server-everything) in its Streamable HTTP mode, and the TypeScript SDK
 * v1's own example server (simpleStreamableHttp). Each is started once for the file.
 */
let everything: ThirdPartyMcpServer;
let example: ThirdPartyMcpServer;

beforeAll(async () => {
  [everything, example] = await Promise.all([
    startThirdPartyMcpServer({
      entry: join('node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js'),
      args: ['streamableHttp'],
      portVariable: 'PORT',
    }),
    startThirdPartyMcpServer({
      entry: join(
        'node_modules',
        '@modelcontextprotocol',
        'sdk',
        'dist',
        'esm',
        'examples',
        'server',
        'simpleStreamableHttp.js',
      ),
      portVariable: 'MCP_PORT',
    }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([everything?.close(), example?.close()]);
});

/** Arguments for one call to a tool a server offers, and what its answer says. */
type Calls = Readonly<Record<string, { args: Record<string, unknown>; says: RegExp }>>;

/** A call for each tool server-everything offers. The gzip tool reads a data: URI, not the web. */
const EVERYTHING_CALLS: Calls = {
  echo: { args: { message: 'hi' }, says: /^Echo: hi$/ },
  'get-annotated-message': {
    args: { messageType: 'success', includeImage: true },
    says: /^Operation completed successfully\n\[image image\/png, \d+ bytes, artifact [0-9a-f-]{36}\]$/,
  },
  'get-env': { args: {}, says: /"PORT"/ },
  'get-resource-links': { args: { count: 2 }, says: /\[resource [^\]]+\]/ },
  'get-resource-reference': { args: { resourceType: 'Text', resourceId: 1 }, says: /\S/ },
  'get-structured-content': { args: { location: 'New York' }, says: /"temperature":33/ },
  'get-sum': { args: { a: 2, b: 40 }, says: /42/ },
  'get-tiny-image': { args: {}, says: /image\/png/ },
  'gzip-file-as-resource': {
    args: { name: 'hi.txt.gz', data: 'data:text/plain;base64,aGk=', outputType: 'resource' },
    says: /\[resource [^\]]*hi\.txt\.gz[^\]]*\]/,
  },
  'toggle-simulated-logging': { args: {}, says: /simulated/i },
  'toggle-subscriber-updates': { args: {}, says: /subscri/i },
  'trigger-long-running-operation': {
    args: { duration: 0.02, steps: 2 },
    says: /Long running operation completed/,
  },
};

/** A call for each tool the SDK v1 example offers. */
const EXAMPLE_CALLS: Calls = {
  greet: { args: { name: 'Ada' }, says: /^Hello, Ada!$/ },
  // Logs to the client twice, a second apart, before it answers.
  'multi-greet': { args: { name: 'Ada' }, says: /^Good morning, Ada!$/ },
  // Mesh offers no elicitation: the example answers that it could not ask, as a plain result.
  'collect-user-info': { args: { infoType: 'contact' }, says: /^Error collecting contact/ },
  'start-notification-stream': { args: { interval: 1, count: 3 }, says: /\S/ },
  'list-files': { args: {}, says: /\[resource file:\/\/\/example\/file1\.txt\]/ },
};

/** Calls every offered tool once with its written call; a tool without one fails the test. */
async function callEveryOffered(
  server: TestServer,
  tools: readonly CatalogTool[],
  calls: Calls,
): Promise<void> {
  for (const t of tools.filter((x) => x.usable)) {
    const call = calls[t.name];
    expect(call, `no call is written for ${t.name}`).toBeDefined();
    if (!call) continue;
    const result = await callAsOperator(server, 'ada', t.tool, call.args);
    expect(result.status, t.name).toBe('succeeded');
    expect(result.observation?.kind, t.name).toBe('result');
    expect(result.observation?.text, t.name).toMatch(call.says);
  }
}

const TASK_ONLY = 'it accepts only task-augmented calls (MCP tasks), which Mesh does not make';

describe.each(testDatabases())('servers nobody here wrote, through Mesh on $name', (database) => {
  let server: TestServer;
  let dispose: () => Promise<void>;
  let everythingTools: CatalogTool[];
  let exampleTools: CatalogTool[];

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    server = await startTestServer(opened.db);
    expect((await server.api('POST', '/api/agents', { name: 'ada' })).status).toBe(201);
    everythingTools = await connectOverApi(server, {
      agent: 'ada',
      slug: 'ev',
      url: everything.url,
    });
    exampleTools = await connectOverApi(server, { agent: 'ada', slug: 'v1', url: example.url });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await dispose?.();
  });

  describe('server-everything (Streamable HTTP)', () => {
    it('accounts for every tool it lists: offered, or withheld with a reason', async () => {
      expect(everythingTools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['echo', 'get-structured-content', 'get-tiny-image']),
      );
      await expectEveryToolAccountedFor(server, 'ada', everythingTools);
      expect(everythingTools.filter((t) => !t.usable)).toEqual([
        expect.objectContaining({ name: 'simulate-research-query', withheld_reason: TASK_ONLY }),
      ]);
    });

    it('answers a call to every tool it offers', async () => {
      await callEveryOffered(server, everythingTools, EVERYTHING_CALLS);
    });

    it('echoes', async () => {
      const echoed = await callAsOperator(server, 'ada', 'ev__echo', { message: 'hello, world' });
      expect(echoed.status).toBe('succeeded');
      expect(echoed.observation).toEqual({ kind: 'result', text: 'Echo: hello, world' });
    });

    it('returns structured content checked against its output schema', async () => {
      expect(
        everythingTools.find((t) => t.name === 'get-structured-content')?.output_schema,
      ).toMatchObject({ type: 'object', required: ['temperature', 'conditions', 'humidity'] });
      const weather = await callAsOperator(server, 'ada', 'ev__get-structured-content', {
        location: 'Chicago',
      });
      const data = { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 };
      expect(weather.observation).toEqual({ kind: 'result', text: JSON.stringify(data), data });
    });

    it('returns an image', async () => {
      const image = await callAsOperator(server, 'ada', 'ev__get-tiny-image', {});
      expect(image.status).toBe('succeeded');
      expect(image.observation?.kind).toBe('result');
      // The image is an artifact of the run, named in the text, its bytes served as the server sent them.
      const [link] = image.observation?.artifacts ?? [];
      expect(link).toMatchObject({ kind: 'image', mediaType: 'image/png' });
      expect(image.observation?.text).toContain(`artifact ${link?.artifactId}`);
      const served = await fetch(
        `${server.url}api/runs/${image.runId}/artifacts/${link?.artifactId}/content`,
        { headers: { authorization: `Bearer ${server.token}` } },
      );
      expect(served.headers.get('content-type')).toBe('image/png');
      const bytes = Buffer.from(await served.arrayBuffer());
      expect(bytes.length).toBe(link?.sizeBytes);
      expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
    });

    it('survives the server’s restart: a forgotten session is opened again, the call sent once', async () => {
      // A server of its own, restarted on the same address: it forgets every session, and
      // answers the old one with 400 "No valid session ID" (not the 404 the spec prescribes).
      const options = {
        entry: join(
          'node_modules',
          '@modelcontextprotocol',
          'server-everything',
          'dist',
          'index.js',
        ),
        args: ['streamableHttp'],
        portVariable: 'PORT',
      };
      let restarting = await startThirdPartyMcpServer(options);
      try {
        await connectOverApi(server, { agent: 'ada', slug: 'evr', url: restarting.url });
        const before = await callAsOperator(server, 'ada', 'evr__echo', { message: 'one' });
        expect(before.observation).toEqual({ kind: 'result', text: 'Echo: one' });
        const port = Number(new URL(restarting.url).port);
        await restarting.close();
        restarting = await startThirdPartyMcpServer({ ...options, port });
        const after = await callAsOperator(server, 'ada', 'evr__echo', { message: 'two' });
        expect(after.status).toBe('succeeded');
        expect(after.observation).toEqual({ kind: 'result', text: 'Echo: two' });
        // Exactly one call step: the refused attempt was not recorded as a second call.
        expect(after.steps.filter((s) => s.kind === 'tool_call')).toHaveLength(1);
      } finally {
        await restarting.close();
      }
    });

    it('reports an isError result as a tool error, and the run still succeeds', async () => {
      // The handler throws on an id its input schema admits; the SDK answers `isError: true`.
      const refused = await callAsOperator(server, 'ada', 'ev__get-resource-reference', {
        resourceType: 'Text',
        resourceId: 0,
      });
      expect(refused.status).toBe('succeeded');
      expect(refused.observation?.kind).toBe('tool_error');
      expect(refused.observation?.text).toContain('Invalid resourceId: 0');
    });
  });

  describe('the SDK v1 example server (simpleStreamableHttp)', () => {
    it('accounts for every tool it lists: offered, or withheld with a reason', async () => {
      expect(exampleTools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['greet', 'multi-greet', 'list-files']),
      );
      await expectEveryToolAccountedFor(server, 'ada', exampleTools);
      // Both are registered as task tools, which the SDK lists with taskSupport "required".
      expect(exampleTools.filter((t) => !t.usable)).toEqual([
        expect.objectContaining({ name: 'collect-user-info-task', withheld_reason: TASK_ONLY }),
        expect.objectContaining({ name: 'delay', withheld_reason: TASK_ONLY }),
      ]);
    });

    it('answers a call to every tool it offers', async () => {
      await callEveryOffered(server, exampleTools, EXAMPLE_CALLS);
    });

    it('refuses a withheld tool with why, before making a run for it', async () => {
      await expect(callAsOperator(server, 'ada', 'v1__delay', { duration: 1 })).rejects.toThrow(
        'v1__delay is not offered: it accepts only task-augmented calls',
      );
    });
  });
});

describe('mesh tools call on server-everything', () => {
  const home = freshMeshHome('mesh-interop-cli-');
  let restoreEnv: () => void = () => undefined;

  // Beside a `mesh serve` holding the home, as an operator runs it: each command goes to the
  // server over its socket instead of opening the embedded database itself.
  let serve: ServeProcess;
  beforeAll(async () => {
    restoreEnv = setEnv({ MESH_HOME: home, DATABASE_URL: '' });
    serve = serveIn(home, '--port', '0');
    await serve.waitFor(/^URL: /);
  }, 60_000);

  afterAll(async () => {
    await serve.stop();
    restoreEnv();
    await removeMeshHome(home);
  });

  it('exits non-zero on a tool error and prints it as kind tool_error', async () => {
    expect((await mesh('agents', 'create', 'ada')).code).toBe(0);
    expect((await mesh('mcp', 'add', 'ev', everything.url, '--allow-loopback-http')).code).toBe(0);
    const tokenFile = join(home, 'token.txt');
    writeFileSync(tokenFile, 'unused-by-this-server\n', { mode: 0o600 });
    const connected = await mesh(
      'mcp',
      'connect',
      '--agent',
      'ada',
      '--provider',
      'ev',
      '--token-file',
      tokenFile,
    );
    expect(connected.code, connected.err).toBe(0);
    expect(connected.out).toMatch(/^Connected ada to ev: \d+ tools, \d+ usable/);
    expect(connected.out).toContain(
      'withheld ev__simulate-research-query: it accepts only task-augmented calls',
    );

    const refused = await mesh(
      'tools',
      'call',
      'ev__get-resource-reference',
      '--agent',
      'ada',
      '--args',
      '{"resourceType":"Text","resourceId":0}',
      '--json',
    );
    expect(refused.code).not.toBe(0);
    expect(JSON.parse(refused.out)).toMatchObject({
      status: 'succeeded',
      observation: {
        kind: 'tool_error',
        text: expect.stringContaining('Invalid resourceId') as string,
      },
    });
  }, 60_000);
});
