import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentBudgetOperation } from '../../src/app/agents/budget-operation.ts';
import { chat, type ChatResult } from '../../src/app/conversations/turns.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import { answerRunOperation } from '../../src/app/runs/answer-operation.ts';
import { expireQuestions } from '../../src/app/runs/question-expiry.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { testDatabases } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { fakeModelAgent, testInstanceKey } from '../support/turn.ts';

const ask = (id: string, args: object) => ({
  kind: 'completion' as const,
  content: null,
  toolCalls: [{ id, name: 'request_input', arguments: JSON.stringify(args) }],
});
const say = (content: string) => ({ kind: 'completion' as const, content });

/** The messages of a request the fake received, as the model saw them. */
function messagesOf(body: unknown): { role: string; content: unknown }[] {
  return (body as { messages: { role: string; content: unknown }[] }).messages;
}

/*
 * request_input, issue 33's parking on a question: the run parks in awaiting_input holding no
 * lease, the question is the agent's message in the conversation, anyone who has spoken there
 * answers (not only the asker), the answer is their message and the call's observation, and the
 * run resumes with it. Every refusal is typed and writes nothing: an outsider, a run not parked,
 * a second answer, a blank answer, an answer after expiry; an empty question is refused to the
 * model. An expired question ends the run and tells the conversation.
 */
describe.each(testDatabases())('request_input on $name', (database) => {
  let mesh: Mesh;
  let model: FakeChatCompletions;
  let dispose: () => Promise<void>;
  let agentId: string;
  let conversationId: string;

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    model = await startFakeChatCompletions();
    dispose = async () => {
      await mesh.close();
      await opened.dispose();
      await model.close();
    };
    agentId = await fakeModelAgent(mesh, model.baseUrl, 'asker');
    await invokeOperation(
      mesh,
      agentBudgetOperation,
      { agent: 'asker', rounds: 5, wall_clock_seconds: 30 },
      { actor: 'operator:test' },
    );
    // Bob speaks first in a shared conversation: he is one of its participants.
    model.enqueue(say('Hello, Bob.'));
    const hello = await chat(mesh, {
      agentId,
      audience: 'shared',
      actor: 'user:bob',
      body: 'hello',
    });
    conversationId = hello.conversationId;
  }, 60_000);

  afterAll(async () => {
    await dispose?.();
  });

  const send = (actor: string, body: string) =>
    chat(mesh, { agentId, conversationId, actor, body });
  const answer = (actor: string, run: string, body: string, wait?: number) =>
    invokeOperation(
      mesh,
      answerRunOperation,
      { run, body, ...(wait === undefined ? {} : { wait }) },
      { actor },
    );
  const refusal = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: unknown) => e,
    );
  const messages = async () =>
    (
      await mesh.db.query<{ direction: string; actor: string; body: string }>(
        'select direction, actor, body from messages where conversation_id = $1 order by created_at, id',
        [conversationId],
      )
    ).rows;
  const runRow = async (id: string) =>
    (
      await mesh.db.query<{ status: string; reason: string | null; lease_owner: string | null }>(
        'select status, reason, lease_owner from runs where id = $1',
        [id],
      )
    ).rows[0];

  /** Grace asks something that makes the agent ask the conversation; the run parks. */
  async function parkOn(question: object, id = 'ask-1'): Promise<ChatResult> {
    model.enqueue(ask(id, question));
    const parked = await send('user:grace', 'we have two fixes for the flaky test');
    expect(parked.status).toBe('awaiting_input');
    return parked;
  }

  it('parks without a lease, posts the question as the agent, and resumes on any participant’s answer', async () => {
    const before = (await messages()).length;
    const parked = await parkOn({
      question: 'Which fix should I apply?',
      choices: ['retry the request', 'raise the timeout'],
    });
    expect(await runRow(parked.runId)).toMatchObject({
      status: 'awaiting_input',
      lease_owner: null,
    });
    expect(parked.reason).toMatch(/^waiting for an answer to its question/);
    const posted = (await messages()).slice(before);
    expect(posted).toEqual([
      { direction: 'inbound', actor: 'user:grace', body: 'we have two fixes for the flaky test' },
      {
        direction: 'outbound',
        actor: 'asker',
        body: 'Which fix should I apply?\n\n1. retry the request\n2. raise the timeout',
      },
    ]);

    // Refusals first, each writing nothing.
    const outsider = await refusal(answer('user:mallory', parked.runId, 'retry'));
    expect(hasCode(outsider, 'not_a_participant')).toBe(true);
    expect(String((outsider as Error).message)).not.toContain('mallory');
    const blank = await refusal(answer('user:bob', parked.runId, '   '));
    expect(hasCode(blank, 'invalid_input')).toBe(true);
    expect((await messages()).length).toBe(before + 2);
    expect((await runRow(parked.runId))?.status).toBe('awaiting_input');

    // Bob, not Grace who asked, answers; the run resumes past its 30 s wall clock, which waiting
    // does not count. The wait is made a minute long in the rows (the run's start and the
    // question's asking moved back), rather than waited out.
    await mesh.db.query(
      `update runs set created_at = created_at - interval '60 seconds',
         started_at = started_at - interval '60 seconds' where id = $1`,
      [parked.runId],
    );
    await mesh.db.query(
      `update run_questions set asked_at = asked_at - interval '60 seconds' where run_id = $1`,
      [parked.runId],
    );
    model.enqueue(say('Applying the timeout fix, as Bob chose.'));
    const answered = await answer('user:bob', parked.runId, 'raise the timeout', 30);
    expect(answered).toMatchObject({
      run_id: parked.runId,
      answered_by: 'user:bob',
      status: 'succeeded',
      reply: 'Applying the timeout fix, as Bob chose.',
    });
    expect((await messages()).slice(before + 2)).toEqual([
      { direction: 'inbound', actor: 'user:bob', body: 'raise the timeout' },
      { direction: 'outbound', actor: 'asker', body: 'Applying the timeout fix, as Bob chose.' },
    ]);
    // The model saw the answer, attributed, as the call's observation.
    const last = model.requests.at(-1)!;
    const tool = messagesOf(last.json).find((m) => m.role === 'tool');
    expect(tool?.content).toBe('user:bob answered: raise the timeout');

    // The question was answered: another answer is refused, and writes nothing.
    const again = await refusal(answer('user:grace', parked.runId, 'retry the request'));
    expect(hasCode(again, 'not_awaiting_input')).toBe(true);
    expect((await messages()).length).toBe(before + 4);
  }, 60_000);

  it('refuses an answer to a run that never asked', async () => {
    model.enqueue(say('Noted.'));
    const plain = await send('user:grace', 'just so you know');
    expect(plain.status).toBe('succeeded');
    const refused = await refusal(answer('user:grace', plain.runId, 'an answer'));
    expect(hasCode(refused, 'not_awaiting_input')).toBe(true);
  });

  it('takes one of two answers at once and refuses the other', async () => {
    const parked = await parkOn({ question: 'Ship it today?' }, 'ask-2');
    model.enqueue(say('Shipping.'));
    const results = await Promise.allSettled([
      answer('user:bob', parked.runId, 'yes'),
      answer('user:grace', parked.runId, 'no'),
    ]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const lost = results.find((r) => r.status === 'rejected');
    expect(
      hasCode(lost?.status === 'rejected' ? lost.reason : undefined, 'not_awaiting_input'),
    ).toBe(true);
    await mesh.runs.settled(parked.runId, 30_000);
    const answers = (await messages()).filter((m) => m.body === 'yes' || m.body === 'no');
    expect(answers).toHaveLength(1);
  }, 60_000);

  it('refuses an empty question to the model, which can ask again properly', async () => {
    model.enqueue(ask('ask-3', { question: '   ' }), say('I will decide myself.'));
    const ended = await send('user:grace', 'decide for me');
    expect(ended.status).toBe('succeeded');
    const observation = ended.steps.find((s) => s.kind === 'observation');
    expect(observation?.kind === 'observation' && observation.observation['kind']).toBe(
      'invalid_input',
    );
    const text = observation?.kind === 'observation' ? observation.observation['text'] : undefined;
    expect(typeof text === 'string' ? text : '').toContain('question');
  });

  it('expires an unanswered question, ends the run with the reason and tells the conversation', async () => {
    const parked = await parkOn({ question: 'Which branch?' }, 'ask-4');
    // Not yet expired: the sweep ends nothing.
    expect(await expireQuestions(mesh)).toBe(0);
    await mesh.db.query(
      `update run_questions set expires_at = now() - interval '1 second' where run_id = $1`,
      [parked.runId],
    );
    const late = await refusal(answer('user:bob', parked.runId, 'main'));
    expect(hasCode(late, 'question_expired')).toBe(true);
    expect(await expireQuestions(mesh)).toBe(1);
    expect(await runRow(parked.runId)).toMatchObject({
      status: 'failed',
      reason: 'question expired: no answer within 24 h',
    });
    const told = (await messages()).at(-1)!;
    expect(told.actor).toBe('asker');
    expect(told.body).toContain(
      'I stopped before finishing: no one answered my question within 24 h, so it expired. I had asked: "Which branch?"',
    );
    expect(told.body).toContain('Not done:');
    expect(told.body).not.toContain('request_input: asked for, never run');
    expect(await expireQuestions(mesh)).toBe(0);
    const after = await refusal(answer('user:bob', parked.runId, 'main'));
    expect(hasCode(after, 'not_awaiting_input')).toBe(true);
  });
});
