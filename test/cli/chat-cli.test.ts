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
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';

const home = freshMeshHome('mesh-chat-cli-');
const mesh = meshIn(home);
const KEY = 'sk-cli-canary-0123456789';

// Beside a running `mesh serve`, as an operator runs it: the commands' work goes to the server.
describe('mesh chat against an OpenAI-compatible server on loopback', () => {
  let fake: FakeChatCompletions;
  let serve: ServeProcess;
  beforeAll(async () => {
    fake = await startFakeChatCompletions();
    serve = serveIn(home, '--port', '0');
    await serve.waitFor(/^URL: /);
  }, 60_000);
  afterAll(async () => {
    await serve.stop();
    await fake.close();
    await removeMeshHome(home);
  });

  it('remembers through a tool round, prints the reply, and runs show lists every step', async () => {
    const keyFile = join(home, 'key.txt');
    writeFileSync(keyFile, `${KEY}\n`, { mode: 0o600 });
    const added = await mesh(
      'providers',
      'add',
      '--name',
      'loop',
      '--base-url',
      fake.baseUrl,
      '--api-key-file',
      keyFile,
    );
    expect(added.code).toBe(0);
    expect(added.stdout + added.stderr).not.toContain(KEY);
    expect(
      (await mesh('agents', 'create', 'demo', '--provider', 'loop', '--model', 'fake-model')).code,
    ).toBe(0);

    fake.enqueue(
      {
        kind: 'completion',
        toolCalls: [
          {
            id: 'call_1',
            name: 'remember',
            arguments: '{"content":"the deploy window is Friday"}',
          },
        ],
        usage: { promptTokens: 700, completionTokens: 20, totalTokens: 720 },
      },
      { kind: 'completion', content: 'Noted: the deploy window is Friday.' },
    );
    const chat = await mesh(
      'chat',
      '--agent',
      'demo',
      '--json',
      'remember that the deploy window is Friday',
    );
    expect(chat.code).toBe(0);
    const result = JSON.parse(chat.stdout) as {
      run_id: string;
      status: string;
      reply: string;
      steps: unknown[];
    };
    expect(result.status).toBe('succeeded');
    expect(result.reply).toBe('Noted: the deploy window is Friday.');
    expect(result.steps).toHaveLength(7);
    expect(fake.requests[0]?.headers['authorization']).toBe(`Bearer ${KEY}`);

    const shown = await mesh('runs', 'show', result.run_id);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/model_request\s+completed round 1: \d+ tokens estimated/);
    expect(shown.stdout).toMatch(/tool_call\s+completed remember \(call_1\)/);
    expect(shown.stdout).toMatch(/observation\s+completed result \(call_1\): Remembered as memory/);
    expect(shown.stdout).toMatch(/reply\s+completed "Noted: the deploy window is Friday."/);
    expect(shown.stdout).not.toContain(KEY);

    // What the model was sent at request 2, by number: the same messages the provider received.
    const request = await mesh('runs', 'show', result.run_id, '--request', '2');
    expect(request.code).toBe(0);
    expect(request.stdout).toMatch(
      /^run \S+ request 2 \(step \d+, round 2\): \{"model":"fake-model"\}/,
    );
    expect(request.stdout).toContain('remember that the deploy window is Friday');
    expect(request.stdout).toMatch(/--- tools \(\d+\): .*remember/);
    const snapshot = JSON.parse(
      (await mesh('runs', 'show', result.run_id, '--request', '2', '--json')).stdout,
    ) as { prompt: { messages: { role: string; content?: string }[] } };
    const wire = JSON.parse(fake.requests[1]?.body ?? '{}') as {
      messages: { role: string; content?: string | null }[];
    };
    expect(snapshot.prompt.messages.map((m) => [m.role, m.content ?? ''])).toEqual(
      wire.messages.map((m) => [m.role, m.content ?? '']),
    );
  }, 90_000);
});
