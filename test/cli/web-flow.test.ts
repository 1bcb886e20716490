import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshMeshHome, meshIn, serveIn, type ServeProcess } from '../support/cli.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { startWebFake, type WebFake } from '../support/web-fakes/index.ts';

const EXA_KEY = 'exa-e2e-key-0123456789abcdef';
const MODEL_KEY = 'sk-model-key-0123456789';

/*
 * Issue 15's flows as an operator runs them, with the CLI beside a running `mesh serve`: a
 * provider registered and granted with `mesh web`, then `mesh chat` against a Chat Completions
 * fake that calls web_search, then web_read on a result, then answers; `mesh runs show` shows
 * both calls, the provider that served them and the meter. Then conversation_search finds what
 * was decided in an earlier conversation of the same agent, and nothing of another agent's. The
 * provider's key is in no output, log line, model request or step.
 */
describe('web search and reading, and conversation search, through mesh chat', () => {
  let home: string;
  let chatFake: FakeChatCompletions;
  let exa: WebFake;
  let serve: ServeProcess | undefined;
  const output: string[] = [];

  beforeAll(async () => {
    home = freshMeshHome('mesh-web-flow-');
    [chatFake, exa] = await Promise.all([
      startFakeChatCompletions(),
      startWebFake('exa', { apiKey: EXA_KEY }),
    ]);
    serve = serveIn(home, '--port', '0');
    await serve.waitFor(/^URL: /);
  }, 60_000);

  afterAll(async () => {
    await serve?.stop();
    await chatFake?.close();
    await exa?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const mesh = (...args: string[]) => meshIn(home)(...args);
  const step = async (...args: string[]) => {
    const r = await mesh(...args);
    output.push(r.stdout, r.stderr);
    expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    return r.stdout;
  };
  const chat = async (agent: string, text: string) => {
    const r = await mesh('chat', '--agent', agent, '--json', text);
    output.push(r.stdout, r.stderr);
    expect(r.code, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { run_id: string; status: string; reply: string };
  };

  it('searches, reads a result, answers; the run shows both calls, the provider and the meter', async () => {
    writeFileSync(join(home, 'model.key'), `${MODEL_KEY}\n`);
    writeFileSync(join(home, 'exa.key'), `${EXA_KEY}\n`);
    const model = ['--base-url', chatFake.baseUrl, '--api-key-file', join(home, 'model.key')];
    await step('providers', 'add', '--name', 'loop', ...model);
    await step('agents', 'create', 'ada', '--provider', 'loop', '--model', 'fake-model');
    await step('agents', 'create', 'bob', '--provider', 'loop', '--model', 'fake-model');
    const refused = await mesh(
      'web',
      'add',
      '--kind',
      'exa',
      '--name',
      'exa',
      '--base-url',
      exa.baseUrl,
      '--api-key-file',
      join(home, 'exa.key'),
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/https.*--allow-loopback-http/);
    const added = await step(
      'web',
      'add',
      '--kind',
      'exa',
      '--name',
      'exa',
      '--base-url',
      exa.baseUrl,
      '--allow-loopback-http',
      '--max-calls-per-run',
      '5',
      '--api-key-file',
      join(home, 'exa.key'),
    );
    expect(added).toMatch(/serves web_search and web_read; at most 5 calls per run/);
    await step('web', 'grant', '--agent', 'ada', '--provider', 'exa');
    const listed = await step('web', 'list');
    expect(listed).toMatch(
      /exa\s+exa\s+http:\/\/127\.0\.0\.1:\d+\s+serves web_search, web_read\s+5 calls\/run\s+key present/,
    );
    expect(listed).toMatch(/ada → exa/);

    const page = 'https://docs.example.com/results/1';
    chatFake.enqueue(
      {
        kind: 'completion',
        content: null,
        toolCalls: [
          { id: 'call_s', name: 'web_search', arguments: '{"query":"deploy windows","count":3}' },
        ],
      },
      {
        kind: 'completion',
        content: null,
        toolCalls: [{ id: 'call_r', name: 'web_read', arguments: JSON.stringify({ url: page }) }],
      },
      {
        kind: 'completion',
        content: 'We decided the deploy window is Tuesday 14:00 UTC, as the page recommends.',
      },
    );
    const before = chatFake.requests.length;
    const result = await chat('ada', 'find guidance on deploy windows and decide ours');
    expect(result.status).toBe('succeeded');
    expect(result.reply).toContain('Tuesday 14:00 UTC');
    // The model saw the search results, then the page.
    const second = chatFake.requests[before + 1]?.body ?? '';
    expect(second).toContain(page);
    const third = chatFake.requests[before + 2]?.body ?? '';
    expect(third).toContain(`Page at ${page}`);
    expect(exa.requests.map((r) => r.path)).toEqual(['/search', '/contents']);

    const shown = await step('runs', 'show', result.run_id);
    expect(shown).toMatch(/tool_call\s+completed web_search \(call_s\) query\/replayable/);
    expect(shown).toMatch(
      /observation\s+completed result \(call_s\) \[via exa, 1 provider call\(s\)\]: 1\. /,
    );
    expect(shown).toMatch(/tool_call\s+completed web_read \(call_r\) query\/replayable/);
    expect(shown).toMatch(/observation\s+completed result \(call_r\) \[via exa, 1 provider call/);
    expect(shown).toMatch(/usage \{[^\n]*"providerCalls":\{"exa":2\}/);
    // Every step in full, for the key check below.
    await step('runs', 'show', '--json', result.run_id);
  }, 90_000);

  it('finds what was decided in an earlier conversation, and nothing of another agent’s', async () => {
    // Bob's own conversation says something else about the deploy window.
    chatFake.enqueue({ kind: 'completion', content: 'Bob here: our deploy window is Monday.' });
    await chat('bob', 'what is our deploy window?');

    chatFake.enqueue(
      {
        kind: 'completion',
        content: null,
        toolCalls: [
          { id: 'call_c', name: 'conversation_search', arguments: '{"query":"deploy window"}' },
        ],
      },
      { kind: 'completion', content: 'Last time we decided Tuesday 14:00 UTC.' },
    );
    const before = chatFake.requests.length;
    const result = await chat('ada', 'what did we decide about the deploy window last week?');
    expect(result.status).toBe('succeeded');
    const seen = chatFake.requests[before + 1]?.body ?? '';
    expect(seen).toContain('Tuesday 14:00 UTC');
    expect(seen).not.toContain('Monday');
    const shown = await step('runs', 'show', result.run_id);
    expect(shown).toMatch(/observation\s+completed result \(call_c\): - \d{4}-\d{2}-\d{2}/);
  }, 90_000);

  it('shows the provider key nowhere: outputs, logs, model requests, steps', () => {
    const everywhere = [
      ...output,
      ...(serve?.lines ?? []),
      ...chatFake.requests.map((r) => r.body),
    ].join('\n');
    expect(everywhere).toContain('web_search');
    expect(everywhere).not.toContain(EXA_KEY);
    // The vendor's fake did get it, where Exa wants it.
    expect(exa.requests.length).toBeGreaterThan(0);
  });
});
