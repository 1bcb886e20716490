import { describe, expect, it } from 'vitest';
import { progressPoster } from '../../src/app/agents/own-verb-services.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import { listMessages } from '../../src/store/conversations.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import { createRedactor } from '../../src/tool/redaction.ts';
import { testDatabases } from '../support/db.ts';
import { dataOf } from '../support/run.ts';
import { scriptedAgent, suiteMesh } from '../support/turn.ts';

describe.each(testDatabases())('the progress verb on $name', (database) => {
  const meshOf = suiteMesh(database);

  it('posts a note to the conversation while the run goes on, as a step and a message; a second too soon is held back', async () => {
    const mesh = meshOf();
    const agentId = await scriptedAgent(mesh, {
      rules: [
        {
          match: 'work on (.+)',
          rounds: [
            {
              toolCalls: [
                {
                  name: 'progress',
                  arguments: { text: 'Halfway through $1', link: 'https://ci.example.com/runs/7' },
                },
              ],
            },
            { toolCalls: [{ name: 'progress', arguments: { text: 'Almost there' } }] },
            { content: 'Done with $1.' },
          ],
        },
      ],
    });
    const result = await chat(mesh, { agentId, actor: 'ada', body: 'work on the report' });
    expect(result.status).toBe('succeeded');
    const observations = result.steps.filter((s) => s.kind === 'observation');
    const [first, second] = observations.map((s) =>
      s.kind === 'observation' ? s.observation : undefined,
    );
    expect(first?.kind).toBe('result');
    const posted = (first?.data ?? {}) as { message_id?: string; text?: string; link?: string };
    expect(posted).toMatchObject({
      text: 'Halfway through the report',
      link: 'https://ci.example.com/runs/7',
    });
    expect(second?.kind).toBe('tool_error');
    expect(second?.text).toMatch(/^Not posted: a note was posted less than 5 s ago/);

    // In the conversation, between the question and the reply, attributed to the agent.
    const messages = await listMessages(mesh.db, result.conversationId);
    expect(messages.map((m) => [m.direction, m.body])).toEqual([
      ['inbound', 'work on the report'],
      ['outbound', 'Halfway through the report\nhttps://ci.example.com/runs/7'],
      ['outbound', 'Done with the report.'],
    ]);
    expect(messages[1]?.id).toBe(posted.message_id);
    // The call is a step of the run like any other: its package is the agent's own.
    const call = result.steps.find((s) => s.kind === 'tool_call');
    expect(call?.kind === 'tool_call' && call.package).toMatchObject({ id: 'mesh.agent' });
    expect(dataOf(result.steps.find((s) => s.kind === 'model_request'))?.['offered']).toContain(
      'progress',
    );
  });

  it('posts once per call, within the run’s limits, redacted, and refuses what it cannot post without echoing it', async () => {
    const mesh = meshOf();
    const agentId = await scriptedAgent(mesh, {
      rules: [{ match: '.*', rounds: [{ content: 'ok' }] }],
    });
    const { runId, conversationId } = await chat(mesh, { agentId, actor: 'ada', body: 'hello' });
    const secret = 'sk-progress-secret-0123456789';
    const poster = progressPoster(mesh.db, createRedactor([secret]), {
      perRun: 2,
      minIntervalMs: 0,
    });
    const ctx = (callId: string) => ({ agentId, runId, callId }) as ToolContext;

    const once = await poster.post(ctx('c1'), { text: `key is ${secret}` });
    const again = await poster.post(ctx('c1'), { text: 'a different text on a resumed run' });
    expect(once.posted && again.posted && again.messageId).toBe(once.posted && once.messageId);
    const body = (await listMessages(mesh.db, conversationId)).at(-1)?.body;
    expect(body).not.toContain(secret);
    expect(body).toContain('[redacted]');

    expect(await poster.post(ctx('c2'), { text: 'two' })).toMatchObject({ posted: true });
    expect(await poster.post(ctx('c3'), { text: 'three' })).toEqual({
      posted: false,
      why: 'this task already posted 2 notes, its limit; say the rest in your reply',
    });
    expect(await poster.post(ctx('c4'), { text: 'x', link: 'javascript:alert(1)' })).toEqual({
      posted: false,
      why: 'link is not an http(s) URL',
    });
    expect(await poster.post(ctx('c5'), { text: 'x', link: 'not a url' })).toEqual({
      posted: false,
      why: 'link is not an absolute URL',
    });
    expect(await poster.post(ctx('c6'), { text: '   ' })).toEqual({
      posted: false,
      why: 'the note is empty',
    });
    expect((await listMessages(mesh.db, conversationId)).map((m) => m.body)).toEqual([
      'hello',
      'ok',
      `key is [redacted]`,
      'two',
    ]);
  });
});
