import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import { promptLines, type PromptAnswer } from '../../src/app/runs/prompt-view.ts';
import { showRunOperation } from '../../src/app/runs/operations.ts';
import type { RunAnswer } from '../../src/app/runs/run-lines.ts';
import type { ModelClient } from '../../src/model/client.ts';
import type { ModelRequest, ModelResponse } from '../../src/model/wire.ts';
import { snapshotParts } from '../../src/run/prompt-snapshot.ts';
import { createRedactor } from '../../src/tool/redaction.ts';
import { testDatabases } from '../support/db.ts';
import { clientAgent, seedMemory, testInstanceKey } from '../support/turn.ts';

const SECRET = 'sk-snapshot-canary-0123456789abcdef';
const operator = { actor: 'operator:test' } as const;

/*
 * The prompt snapshot: each model request's exact input (messages after redaction, the tools
 * offered, the model) is kept with its step, content-addressed, and shown by request number.
 */
describe.each(testDatabases())('the prompt snapshot on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  let agentId: string;
  /** What the model was sent, request by request, as JSON (what the snapshot must equal). */
  const sent: ModelRequest[] = [];

  const respond = (request: ModelRequest): ModelResponse => {
    const usage = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };
    const round = request.messages.filter((m) => m.role === 'tool').length + 1;
    const call = (name: string, args: object) => ({
      message: {
        role: 'assistant' as const,
        content: '',
        toolCalls: [{ id: `call_${round}`, name, arguments: JSON.stringify(args) }],
      },
      finishReason: 'tool_calls' as const,
      usage,
    });
    if (round === 1) return call('remember', { content: 'the deploy window is Friday' });
    if (round === 2) return call('recall', { query: 'deploy window' });
    return {
      message: { role: 'assistant', content: 'Friday.', toolCalls: [] },
      finishReason: 'stop',
      usage,
    };
  };

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    const base = assembleMesh(opened.db, testInstanceKey());
    const model: ModelClient = {
      kind: 'openai_compatible',
      complete(request) {
        sent.push(JSON.parse(JSON.stringify(request)) as ModelRequest);
        return Promise.resolve(respond(request));
      },
    };
    ({ mesh, agentId } = await clientAgent(base, model, 'ada'));
    await seedMemory(mesh.db, agentId, 'the release train leaves on Tuesdays');
    // A credential Mesh holds: whatever carries it is stored redacted.
    base.redactor.hold(SECRET);
  }, 60_000);
  afterAll(async () => {
    await mesh?.close();
    await dispose?.();
  });

  const show = (run: string, request?: number) =>
    invokeOperation(mesh, showRunOperation, request ? { run, request } : { run }, operator);

  it("keeps each request's exact messages and tools, shown by request number", async () => {
    sent.length = 0;
    const turn = await chat(mesh, {
      agentId,
      actor: 'u',
      body: `When is the deploy window? (my key is ${SECRET})`,
    });
    expect(turn.status).toBe('succeeded');
    expect(sent).toHaveLength(3);

    for (const [i, request] of sent.entries()) {
      const { prompt } = (await show(turn.runId, i + 1)) as RunAnswer & { prompt: PromptAnswer };
      expect(prompt).toMatchObject({ request: i + 1, missing: 0, params: { model: 'stub-model' } });
      // Exactly what was sent, the held secret aside.
      const redacted: unknown = JSON.parse(
        JSON.stringify(request.messages).replaceAll(SECRET, '[redacted]'),
      );
      expect(prompt.messages).toEqual(redacted);
      expect(prompt.tools).toEqual(request.tools);
      expect(JSON.stringify(prompt)).not.toContain(SECRET);
    }
    const second = (await show(turn.runId, 2)) as RunAnswer & { prompt: PromptAnswer };
    const lines = promptLines(turn.runId, second.prompt);
    expect(lines[0]).toMatch(/^run \S+ request 2 \(step \d+, round 2\): \{"model":"stub-model"\}$/);
    expect(lines).toContain('--- 1. system');
    expect(lines.join('\n')).toContain('→ call {"id":"call_1","name":"remember"');
    expect(lines.at(-1)).toMatch(/^--- tools \(\d+\): .*remember.*recall/);
    expect(await show(turn.runId)).not.toHaveProperty('prompt');
  });

  it('stores what every request repeats once: the same tools and persona cost one copy', async () => {
    const parts = async () =>
      (await mesh.db.query<{ n: number }>('select count(*)::int as n from prompt_parts')).rows[0]
        ?.n ?? 0;
    const refsOf = (steps: readonly { kind: string; data?: unknown }[]) =>
      steps
        .filter((s) => s.kind === 'model_request')
        .map((s) => (s.data as { prompt: { messages: string[]; tools: string } }).prompt);
    const first = refsOf(
      (await chat(mesh, { agentId, actor: 'u', body: 'And the freeze?' })).steps,
    );
    const before = await parts();
    const again = refsOf((await chat(mesh, { agentId, actor: 'u', body: 'And after it?' })).steps);
    expect(again).toHaveLength(3);
    // The tools offered (every request but the last permitted round's, which offers none) are
    // one part, the same across requests and turns; so is the persona's system prompt.
    expect(again[0]?.tools).toBe(again[1]?.tools);
    expect(again[0]?.tools).toBe(first[0]?.tools);
    // Within a turn, the system prompt (persona, memories) is one part too.
    expect(again[0]?.messages[0]).toBe(again[1]?.messages[0]);
    // The second turn stored only what it did not share: far fewer parts than it references.
    const referenced = again.reduce((n, r) => n + r.messages.length + 1, 0);
    const added = (await parts()) - before;
    const shared = new Set([...first.flatMap((r) => [...r.messages, r.tools])]);
    const novel = new Set(
      again.flatMap((r) => [...r.messages, r.tools]).filter((h) => !shared.has(h)),
    );
    expect(added).toBe(novel.size);
    expect(added).toBeLessThan(referenced / 2);
  });

  it('refuses a request the run does not have, naming it', async () => {
    const turn = await chat(mesh, { agentId, actor: 'u', body: 'One more?' });
    await expect(show(turn.runId, 9)).rejects.toMatchObject({
      code: 'request_not_found',
      message: expect.stringMatching(/has 3 model request\(s\); there is no request 9$/) as string,
    });
  });
});

describe('prompt parts', () => {
  it('are made once per message, and again once a secret is held: none shows it after', () => {
    const redactor = createRedactor();
    const message = { role: 'user', content: `the key is ${SECRET}` };
    const input = { messages: [message], tools: [], params: { model: 'm' } };
    const before = snapshotParts(input, redactor);
    expect(JSON.stringify(before.parts[0]?.body)).toContain(SECRET);
    // The same message object, unchanged: the part made for it before.
    expect(snapshotParts(input, redactor).parts[0]).toBe(before.parts[0]);
    redactor.hold(SECRET);
    const after = snapshotParts(input, redactor);
    expect(JSON.stringify(after.parts[0]?.body)).not.toContain(SECRET);
    expect(after.ref.messages[0]).not.toBe(before.ref.messages[0]);
  });
});
