import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshMeshHome,
  meshIn,
  removeMeshHome,
  serveIn,
  type ServeProcess,
} from '../support/cli.ts';

/*
 * Operations of the catalog on both faces of a running `mesh serve`: the CLI beside it (over the
 * home's socket) and the JSON API print the same body, take run ids by a short prefix, and refuse
 * bad input the same way, naming the flag or the parameter.
 */
describe('catalog operations beside a running server', () => {
  const home = freshMeshHome('mesh-ops-');
  const mesh = meshIn(home);
  let server: ServeProcess;
  let url: string;
  let token: string;

  const api = async (path: string) => {
    const res = await fetch(new URL(path, url), { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    server = serveIn(home, '--port', '0', '--demo');
    url = (await server.waitFor(/^URL: /)).slice('URL: '.length);
    token = (await server.waitFor(/^Operator token: /)).slice('Operator token: '.length);
    for (const text of ['hello', 'hello again']) {
      const sent = await mesh('chat', '--agent', 'demo', text);
      expect(sent.code, sent.stderr).toBe(0);
    }
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
    await removeMeshHome(home);
  });

  it('prints, for every read operation of the catalog, what the API answers', async () => {
    const { operations } = await import('../../src/app/operations/catalog.ts');
    const { operationRequest } = await import('../../src/app/operations/http-layout.ts');
    // What each read needs beyond the demo's world: the MCP catalog names a connection, which the
    // demo has none of (its CLI and API are compared in mcp-cli.test.ts), and the demo's runs
    // store no artifact. Reads that are not on the command line say so in the catalog's test.
    const needsMore = new Set(['mcp.catalog', 'runs.artifact']);
    const reads = operations.filter(
      (op) => op.http.method === 'GET' && !needsMore.has(op.name) && 'command' in op.cli,
    );
    const runs = (await api('/api/runs?agent=demo')).body['runs'] as {
      run_id: string;
      conversation_id: string;
    }[];
    expect(reads.map((op) => op.name)).toEqual(
      expect.arrayContaining([
        'agents.list',
        'runs.list',
        'providers.list',
        'web.list',
        'workspaces.list',
        'tools.search',
        'config.list',
        'secrets.list',
        'runs.show',
        'conversations.list',
        'conversations.show',
        'packages.list',
        'packages.show',
        'packages.installed',
        'mcp.list',
        'mcp.connections',
      ]),
    );
    for (const op of reads) {
      // What each read needs, from the demo's world: the agent, and words to search for.
      const samples: Record<string, string> = {
        agent: 'demo',
        q: 'remember what I said',
        run: runs[0]?.run_id ?? '',
        conversation: runs[0]?.conversation_id ?? '',
        package: 'mesh.memory',
      };
      const input: Record<string, string> = Object.fromEntries(
        op.input.required.map((k: string) => [k, samples[k] ?? '']),
      );
      const cli = op.cli as { command: readonly [string, string]; positionals?: readonly string[] };
      const args = Object.entries(input).flatMap(([k, v]): string[] =>
        cli.positionals?.includes(k) ? [v] : [`--${k}`, v],
      );
      const printed = await mesh(...cli.command, ...args, '--json');
      expect(printed.code, `${op.name}: ${printed.stderr}`).toBe(0);
      const fromApi = await api(operationRequest(op, input).target);
      expect(fromApi.status, op.name).toBe(200);
      expect(JSON.parse(printed.stdout), op.name).toEqual(fromApi.body);
    }
    // A process per read (about twenty): sized for a loaded machine, where each takes seconds.
  }, 180_000);

  it('lists runs: the CLI --json prints what the API answers', async () => {
    const cli = await mesh('runs', 'list', '--agent', 'demo', '--status', 'succeeded', '--json');
    expect(cli.code, cli.stderr).toBe(0);
    const fromApi = await api('/api/runs?agent=demo&status=succeeded');
    expect(fromApi.status).toBe(200);
    expect(JSON.parse(cli.stdout)).toEqual(fromApi.body);
    const runs = fromApi.body['runs'] as { run_id: string; short_id: string; agent: string }[];
    expect(runs).toHaveLength(2);
    expect(runs[0]?.short_id).toBe(runs[0]?.run_id.slice(0, 8));
    expect(runs.every((r) => r.agent === 'demo')).toBe(true);
  });

  it("lists an agent's tools: the CLI --json prints what the API answers", async () => {
    const cli = await mesh('tools', 'list', '--agent', 'demo', '--audience', 'shared', '--json');
    expect(cli.code, cli.stderr).toBe(0);
    const fromApi = await api('/api/agents/demo/tools?audience=shared');
    expect(JSON.parse(cli.stdout)).toEqual(fromApi.body);
    const lines = await mesh('tools', 'list', '--agent', 'demo');
    expect(lines.stdout).toMatch(/^ {2}remember +query +offered$/m);
    expect(lines.stdout).toMatch(/create_github_issue +effect +withheld: needs secret/);
  });

  it("sets an agent's budget profile with units, shows it as the API does, and refuses a bad unit", async () => {
    const set = await mesh(
      'agents',
      'budget',
      'demo',
      '--rounds',
      '20',
      '--wall-clock',
      '30m',
      '--json',
    );
    expect(set.code, set.stderr).toBe(0);
    const answer = JSON.parse(set.stdout) as { budget: Record<string, number>; set: string[] };
    expect(answer.budget).toMatchObject({ rounds: 20, wall_clock_seconds: 1800, tool_calls: 16 });
    expect(answer.set).toEqual(['rounds', 'wall_clock_seconds']);
    // The agent's record shows the budget its next run copies.
    expect((await api('/api/agents/demo')).body['budget']).toEqual(answer.budget);
    const shown = await mesh('agents', 'budget', 'demo');
    expect(shown.stdout).toMatch(/^ {2}rounds +20$/m);
    expect(shown.stdout).toMatch(/^ {2}wall clock +30m$/m);
    expect(shown.stdout).toMatch(/^ {2}tool calls +16 \(default\)$/m);
    const badUnit = await mesh('agents', 'budget', 'demo', '--wall-clock', '30x');
    expect(badUnit.code).toBe(2);
    expect(badUnit.stderr).toContain('--wall-clock is a duration with its unit: 90s, 30m or 2h');
    const tooMany = await mesh('agents', 'budget', 'demo', '--rounds', '500');
    expect(tooMany.code).toBe(1);
    expect(tooMany.stderr).toContain('--rounds');
    const reset = await mesh('agents', 'budget', 'demo', '--reset', '--json');
    expect((JSON.parse(reset.stdout) as { set: string[] }).set).toEqual([]);
  });

  it('shows short ids in the listing, and takes them wherever a run is named', async () => {
    const listed = await mesh('runs', 'list');
    expect(listed.code, listed.stderr).toBe(0);
    const [line] = listed.stdout.trim().split('\n');
    const short = line?.split(/\s+/)[0] ?? '';
    expect(short).toMatch(/^[0-9a-f]{8}$/);
    expect(line).toMatch(/ demo +succeeded /);

    const shown = await mesh('runs', 'show', short, '--json');
    expect(shown.code, shown.stderr).toBe(0);
    const run = JSON.parse(shown.stdout) as { run_id: string };
    expect(run.run_id.startsWith(short)).toBe(true);
    const byApi = await api(`/api/runs/${short}`);
    expect(byApi.status).toBe(200);
    expect(byApi.body['run_id']).toBe(run.run_id);

    const tooShort = await api(`/api/runs/${short.slice(0, 7)}`);
    expect(tooShort.status).toBe(400);
    expect(tooShort.body['error']).toMatchObject({ code: 'invalid_input', field: 'path.run' });
    const none = await mesh('runs', 'show', '00000000');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no run id starts with 00000000');
  });

  it('updates an agent: the CLI prints what the API then shows, and refuses a bad value', async () => {
    const persona = join(home, 'persona.txt');
    writeFileSync(persona, 'You answer in one line.');
    const updated = await mesh(
      'agents',
      'update',
      'demo',
      '--persona-file',
      persona,
      '--image-input',
      'on',
      '--json',
    );
    expect(updated.code, updated.stderr).toBe(0);
    const fromApi = await api('/api/agents/demo');
    // The API's agent also lists its open commitments (none); the rest is what the CLI printed.
    const { commitments, ...agent } = fromApi.body;
    expect(commitments).toEqual([]);
    expect(JSON.parse(updated.stdout)).toEqual(agent);
    expect(fromApi.body).toMatchObject({ persona: 'You answer in one line.', image_input: true });

    const said = await mesh('agents', 'update', 'demo', '--image-input', 'off');
    expect(said.code, said.stderr).toBe(0);
    expect(said.stdout).toContain('Updated agent demo:');
    expect(said.stdout).toContain('image input off');

    const maybe = await mesh('agents', 'update', 'demo', '--image-input', 'maybe');
    expect(maybe.code).toBe(2);
    expect(maybe.stderr).toContain('--image-input takes on or off');
    const nothing = await mesh('agents', 'update', 'demo');
    expect(nothing.code).toBe(1);
    expect(nothing.stderr).toContain('name at least one change');
    const noFile = await mesh('agents', 'update', 'demo', '--persona-file', join(home, 'none'));
    expect(noFile.code).toBe(2);
    expect((await api('/api/agents/demo')).body).toMatchObject({ image_input: false });
  });

  it('replaces keys through the same operation for every kind of backend', async () => {
    const keyFile = join(home, 'key.txt');
    writeFileSync(keyFile, 'sk-new-key-0123456789\n');
    const scripted = await mesh('providers', 'key', 'demo', '--api-key-file', keyFile);
    expect(scripted.code).toBe(1);
    expect(scripted.stderr).toContain('is scripted and takes no API key');
    const none = await mesh('workspaces', 'key', 'nope', '--api-key-file', keyFile);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('no workspace backend named "nope"');
    const missing = await mesh('web', 'key', 'exa');
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('--api-key-file is required');
    expect(scripted.stderr + none.stderr).not.toContain('sk-new-key');
  });

  it('refuses bad input naming the flag or the parameter, never running the operation', async () => {
    const cli = await mesh('runs', 'list', '--status', 'done');
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain('--status must be one of queued, running, awaiting_input');
    const fromApi = await api('/api/runs?status=done');
    expect(fromApi.status).toBe(400);
    expect(fromApi.body['error']).toMatchObject({
      code: 'invalid_input',
      field: 'query.status',
      retryable: false,
    });

    const unknownFlag = await mesh('runs', 'list', '--colour', 'red');
    expect(unknownFlag.code).toBe(2);
    expect(unknownFlag.stderr).toContain("Unknown option '--colour'");
    expect(unknownFlag.stderr).toContain('mesh runs list [--agent AGENT]');
    const unknownParam = await api('/api/runs?colour=red');
    expect(unknownParam.status).toBe(400);
    expect(unknownParam.body['error']).toMatchObject({ field: 'query.colour' });

    const noAgent = await api('/api/runs?agent=nobody');
    expect(noAgent.status).toBe(404);
    expect(noAgent.body['error']).toMatchObject({ code: 'agent_not_found' });

    // A provider needs an endpoint with its key, or a script: the refusal names the flag.
    const noEndpoint = await mesh('providers', 'add', '--name', 'half');
    expect(noEndpoint.code).toBe(1);
    expect(noEndpoint.stderr).toContain('--base-url');
    writeFileSync(join(home, 'bad-script.json'), '{"rules": [');
    const badScript = await mesh(
      'providers',
      'add',
      '--name',
      's',
      '--scripted',
      join(home, 'bad-script.json'),
    );
    expect(badScript.code).toBe(2);
    expect(badScript.stderr).toContain('the file --scripted names is not valid JSON');
    const listed = await mesh('providers', 'list', '--json');
    expect(JSON.stringify(JSON.parse(listed.stdout))).not.toMatch(/"(half|s)"/);
  });

  it('parks the demo on a question: chat prints it, runs answer resumes it, runs show tells both', async () => {
    const asked = await mesh('chat', '--agent', 'demo', 'help me choose a deploy window');
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain(
      'Before I go on: which should I use for a deploy window?\n1. the first option\n2. the second option',
    );
    expect(asked.stderr).toMatch(/awaiting_input/);
    const short = /mesh runs answer ([0-9a-f]{8}) "TEXT"/.exec(asked.stderr)?.[1] ?? '';
    expect(short).toMatch(/^[0-9a-f]{8}$/);
    const waiting = await mesh('runs', 'show', short);
    expect(waiting.stdout).toContain('question (open): Before I go on');
    expect(waiting.stdout).toContain(`mesh runs answer ${short} "TEXT"`);

    // The CLI answers as its caller (user@host), who sent the message: a participant.
    const answered = await mesh('runs', 'answer', short, 'the second option', '--wait', '30');
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stdout).toMatch(/^Answered run [0-9a-f]{8} as \S+@\S+; it is succeeded\./);
    expect(answered.stdout).toContain('Thanks: I will go with what you chose for a deploy window');
    const shown = await mesh('runs', 'show', short);
    expect(shown.stdout).toMatch(
      /question \(answered\): Before I go on.*\n {2}answered by \S+@\S+/,
    );
    const again = await mesh('runs', 'answer', short, 'the first option');
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('not waiting for an answer');
    const byApi = await fetch(new URL(`/api/runs/${short}/answer`, url), {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ body: 'the first option' }),
    });
    expect(byApi.status).toBe(409);
    expect(((await byApi.json()) as { error: { code: string } }).error.code).toBe(
      'not_awaiting_input',
    );
  }, 60_000);

  it("answers the README's follow-up with a recall of what the demo was told", async () => {
    const told = await mesh('chat', '--agent', 'demo', 'remember that the deploy window is Friday');
    expect(told.stdout.trim()).toBe('Noted: the deploy window is Friday.');
    const asked = await mesh(
      'chat',
      '--agent',
      'demo',
      'what do you remember about the deploy window?',
    );
    expect(asked.stdout.trim()).toBe(
      'Here is what my memory returned about the deploy window (see the ledger of this run).',
    );
    const short = /run ([0-9a-f]{8})/.exec(asked.stderr)?.[1] ?? '';
    const shown = await mesh('runs', 'show', short);
    expect(shown.stdout).toMatch(/tool_call[^\n]*recall/);
    expect(shown.stdout).toContain('the deploy window is Friday');
    expect(shown.stdout).not.toMatch(/tool_call[^\n]*remember/);
  }, 60_000);
});
