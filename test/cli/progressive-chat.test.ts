import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  freshMeshHome,
  meshInProcess as mesh,
  serveIn,
  type ServeProcess,
} from '../support/cli.ts';
import { setEnv } from '../support/env.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { startFakeMcpServer, type FakeMcpServer } from '../support/mcp-server.ts';

const home = freshMeshHome('mesh-progressive-');
const TOKEN = 'progressive-mcp-token-7';

/** 48 real tools from the fixture catalog (GitHub, Slack, filesystem), as their servers list them. */
function fixtureTools(): Tool[] {
  const catalog = JSON.parse(
    readFileSync(new URL('../fixtures/mcp-catalog.json', import.meta.url), 'utf8'),
  ) as Record<string, Tool[]>;
  return ['github', 'slack', 'filesystem'].flatMap((server) => catalog[server] ?? []);
}

const toolNames = (request: { json: unknown } | undefined) =>
  ((request?.json as { tools?: { function: { name: string } }[] } | undefined)?.tools ?? []).map(
    (t) => t.function.name,
  );

// Beside a running `mesh serve`, as an operator works: every command goes to the server.
describe('mesh chat with progressive tool loading', () => {
  let serve: ServeProcess;
  let server: FakeMcpServer;
  let model: FakeChatCompletions;
  let restoreEnv: () => void = () => undefined;
  let url = '';
  let operatorToken = '';

  beforeAll(async () => {
    restoreEnv = setEnv({ MESH_HOME: home, DATABASE_URL: '' });
    serve = serveIn(home, '--port', '0');
    [model, server] = await Promise.all([
      startFakeChatCompletions(),
      startFakeMcpServer({ acceptedTokens: new Set([TOKEN]), tools: fixtureTools() }),
    ]);
    url = (await serve.waitFor(/^URL: /)).slice('URL: '.length).trim();
    operatorToken = (await serve.waitFor(/^Operator token: mesh_op_/)).split(': ')[1] ?? '';
  }, 60_000);

  afterAll(async () => {
    await serve.stop();
    await Promise.all([server.close(), model.close()]);
    restoreEnv();
    rmSync(home, { recursive: true, force: true });
  });

  it('searches with tool_search, then calls the remote tool it loaded; search and run view agree', async () => {
    const keyFile = join(home, 'key.txt');
    const tokenFile = join(home, 'token.txt');
    writeFileSync(keyFile, 'sk-progressive\n', { mode: 0o600 });
    writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
    const setup = [
      [
        'providers',
        'add',
        '--name',
        'loop',
        '--base-url',
        model.baseUrl,
        '--api-key-file',
        keyFile,
      ],
      ['agents', 'create', 'dev', '--provider', 'loop', '--model', 'fake-model'],
      ['mcp', 'add', 'gh', server.url, '--allow-loopback-http'],
      ['mcp', 'connect', '--agent', 'dev', '--provider', 'gh', '--token-file', tokenFile],
    ];
    for (const args of setup) expect((await mesh(...args)).code).toBe(0);

    // The operator's search ranks as tool_search does, over what the agent is granted.
    const searched = await mesh('tools', 'search', '--agent', 'dev', '--json', 'open a PR');
    expect(searched.code).toBe(0);
    const ranked = (
      JSON.parse(searched.out) as { results: { name: string; provider?: string; score: number }[] }
    ).results;
    expect(ranked[0]).toMatchObject({ name: 'gh__create_pull_request', provider: 'gh' });
    expect(ranked[0]?.score).toBeGreaterThan(0);
    const api = await fetch(
      new URL('/api/agents/dev/tools/search?q=which+files+changed&limit=3', url),
      {
        headers: { authorization: `Bearer ${operatorToken}` },
      },
    );
    expect(api.status).toBe(200);
    const { results } = (await api.json()) as { results: { name: string }[] };
    expect(results).toHaveLength(3);
    expect(results.map((r) => r.name)).toContain('gh__get_pull_request_files');
    const refused = await fetch(new URL('/api/agents/dev/tools/search?limit=0&q=x', url), {
      headers: { authorization: `Bearer ${operatorToken}` },
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: { code: 'invalid_input', field: 'query.limit' },
    });

    model.enqueue(
      {
        kind: 'completion',
        toolCalls: [
          { id: 'call_s', name: 'tool_search', arguments: '{"query":"open a pull request"}' },
        ],
      },
      {
        kind: 'completion',
        toolCalls: [
          {
            id: 'call_pr',
            name: 'gh__create_pull_request',
            arguments: '{"owner":"acme","repo":"api","title":"Fix","head":"fix","base":"main"}',
          },
        ],
      },
      { kind: 'completion', content: 'Opened the pull request.' },
    );
    const chat = await mesh('chat', '--agent', 'dev', '--json', 'open a PR for the fix branch');
    expect(chat.code).toBe(0);
    const result = JSON.parse(chat.out) as { run_id: string; status: string; reply: string };
    expect(result).toMatchObject({ status: 'succeeded', reply: 'Opened the pull request.' });

    const [first, second, third] = model.requests.filter((r) => r.method === 'POST');
    expect(toolNames(first)).toEqual([
      'request_input',
      'progress',
      'commit',
      'remember',
      'tool_search',
    ]);
    expect(toolNames(second)).toContain('gh__create_pull_request');
    // Its own verbs (5), and no more than a search loads (at most 5).
    expect(toolNames(second).length).toBeLessThanOrEqual(10);
    expect(toolNames(third)).toEqual([]);
    expect(server.received.some((r) => r.tool === 'create_pull_request')).toBe(true);

    const shown = await mesh('runs', 'show', result.run_id);
    expect(shown.out).toMatch(/tools: index \(every schema \d+ tokens, the index \d+;/);
    expect(shown.out).toContain(
      'loaded gh__create_pull_request: searched for "open a pull request"',
    );
    expect(shown.out).toMatch(/tool_call\s+completed gh__create_pull_request \(call_pr\) effect/);
  }, 90_000);
});
