import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { callToolAsOperator } from '../../src/app/runs/operator-call.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import type { Db } from '../../src/store/db.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { listMemories } from '../../src/store/memories.ts';
import { insertModelProvider } from '../../src/store/model-providers.ts';
import { testDatabases } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { testInstanceKey } from '../support/turn.ts';

const CANARY_KEY = `sk-canary-${randomUUID()}`;

/** Every text-like column of every table, as text: where a leaked secret would be found. */
async function dumpTextColumns(db: Db): Promise<string> {
  const { rows: columns } = await db.query<{ table_name: string; column_name: string }>(
    `select table_name, column_name from information_schema.columns
     where table_schema = 'public' and data_type in ('text', 'jsonb', 'json', 'character varying', 'bytea')`,
  );
  const parts: string[] = [];
  for (const c of columns) {
    const { rows } = await db.query<{ v: string | null }>(
      `select ${c.column_name}::text as v from ${c.table_name}`,
    );
    for (const r of rows) if (r.v !== null) parts.push(r.v);
  }
  return parts.join('\n');
}

function toolCall(name: string, args: string, id = `call_${randomUUID().slice(0, 8)}`) {
  return { id, name, arguments: args };
}

function requestTools(body: unknown): string[] | undefined {
  const tools = (body as { tools?: { function: { name: string } }[] }).tools;
  return tools?.map((t) => t.function.name);
}

describe.each(testDatabases())('turns against a Chat Completions server on $name', (database) => {
  let mesh: Mesh;
  let fake: FakeChatCompletions;
  let dispose: () => Promise<void>;
  let agentId: string;
  let agentName: string;

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey(), {
      modelRetry: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    dispose = () => opened.dispose();
    fake = await startFakeChatCompletions();
    const provider = await insertModelProvider(mesh.db, {
      id: randomUUID(),
      name: `fake-${randomUUID().slice(0, 6)}`,
      kind: 'openai_compatible',
      baseUrl: fake.baseUrl,
      script: null,
    });
    await mesh.secrets.capture({
      ownerType: 'model_provider',
      ownerId: provider.id,
      kind: 'api_key',
      value: CANARY_KEY,
    });
    agentId = randomUUID();
    agentName = `agent-${agentId.slice(0, 8)}`;
    await insertAgent(mesh.db, {
      id: agentId,
      name: agentName,
      modelProviderId: provider.id,
      model: 'fake-model',
    });
  });
  afterAll(async () => {
    await fake.close();
    await dispose();
  });

  const say = (body: string) => chat(mesh, { agentId, actor: 'ada', body });

  it('remember, then answer: the memory is persisted with the inbound message as provenance', async () => {
    fake.enqueue(
      {
        kind: 'completion',
        toolCalls: [toolCall('remember', '{"content": "the deploy window is Friday"}')],
      },
      { kind: 'completion', content: 'Noted: the deploy window is Friday.' },
    );
    const before = fake.requests.length;
    const result = await say('remember that the deploy window is Friday');
    expect(result.status).toBe('succeeded');
    expect(result.reply).toBe('Noted: the deploy window is Friday.');
    const memory = (await listMemories(mesh.db, agentId)).find(
      (m) => m.content === 'the deploy window is Friday',
    );
    const run = await mesh.ledger.run(result.runId);
    expect(memory?.sourceMessageId).toBe(run?.inboundMessageId);
    expect(memory?.provenance).toMatchObject({ kind: 'inbound_message', actor: 'ada' });
    const second = fake.requests[before + 1]?.json as {
      messages: { role: string; content: string }[];
    };
    const ledger = second.messages.filter((m) => m.role === 'system').at(-1)?.content ?? '';
    expect(ledger).toContain('Authoritative ledger');
    expect(ledger).toContain(`remembered memory ${memory?.id ?? '?'}`);
    expect(fake.requests[before]?.headers['authorization']).toBe(`Bearer ${CANARY_KEY}`);
  });

  it('the API key is read once a turn: a rotation during a turn is used from the next turn', async () => {
    const provider = (
      await mesh.db.query<{ id: string }>(
        'select model_provider_id as id from agents where id = $1',
        [agentId],
      )
    ).rows[0]?.id as string;
    const rotated = `sk-rotated-${randomUUID()}`;
    const restore = () =>
      mesh.secrets.capture({
        ownerType: 'model_provider',
        ownerId: provider,
        kind: 'api_key',
        value: CANARY_KEY,
      });
    try {
      const before = fake.requests.length;
      // The key is rotated once the turn's first request has arrived, before it is answered.
      const rotation = fake.waitForRequests(before + 1).then(() =>
        mesh.secrets.capture({
          ownerType: 'model_provider',
          ownerId: provider,
          kind: 'api_key',
          value: rotated,
        }),
      );
      fake.enqueue(
        {
          kind: 'after',
          gate: rotation,
          reply: { kind: 'completion', toolCalls: [toolCall('recall', '{"query": "deploy"}')] },
        },
        { kind: 'completion', content: 'Nothing on that.' },
        { kind: 'completion', content: 'Still nothing.' },
      );
      expect((await say('what do you remember about deploys?')).status).toBe('succeeded');
      expect((await say('and now?')).status).toBe('succeeded');
      const keys = fake.requests.slice(before).map((r) => r.headers['authorization']);
      expect(keys).toEqual([`Bearer ${CANARY_KEY}`, `Bearer ${CANARY_KEY}`, `Bearer ${rotated}`]);
    } finally {
      await restore();
    }
  });

  it('recall, amend, then answer: the ledger reports the supersession the store committed', async () => {
    const seeded = await callToolAsOperator(mesh, {
      agent: agentName,
      tool: 'remember',
      arguments: '{"content":"standup is at 9:30"}',
      operator: 'ops',
    });
    const oldId = (seeded.observation?.data as { remembered: { id: string } }).remembered.id;
    fake.enqueue(
      { kind: 'completion', toolCalls: [toolCall('recall', '{"query":"standup"}')] },
      {
        kind: 'completion',
        toolCalls: [
          toolCall('amend', JSON.stringify({ memory_id: oldId, content: 'standup is at 10:00' })),
        ],
      },
      { kind: 'completion', content: 'Updated: standup is at 10:00.' },
    );
    const before = fake.requests.length;
    const result = await say('standup moved to 10:00');
    expect(result.status).toBe('succeeded');
    const third = fake.requests[before + 2]?.json as {
      messages: { role: string; content: string }[];
    };
    const ledger = third.messages.filter((m) => m.role === 'system').at(-1)?.content ?? '';
    expect(ledger).toMatch(new RegExp(`memory ${oldId} was superseded by memory [0-9a-f-]{36}`));
    expect(ledger).toContain('recalled');
    const rows = await listMemories(mesh.db, agentId);
    expect(rows.find((m) => m.id === oldId)?.status).toBe('superseded');
  });

  it('a hallucinated tool name becomes an observation naming the offered tools; the turn goes on', async () => {
    fake.enqueue(
      { kind: 'completion', toolCalls: [toolCall('send_email', '{"to":"x"}')] },
      { kind: 'completion', content: 'I cannot send email.' },
    );
    const before = fake.requests.length;
    const result = await say('email the team');
    expect(result.status).toBe('succeeded');
    const observation = result.steps.find((s) => s.kind === 'observation');
    expect(observation?.observation?.['kind']).toBe('unknown_tool');
    const second = fake.requests[before + 1]?.json as {
      messages: { role: string; content: string }[];
    };
    const toolMessage = second.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toContain('remember, recall, amend, forget');
    expect(second.messages.at(-1)?.content).toContain('refused');
  });

  it('invalid arguments are refused with a message for the model, and a corrected retry succeeds', async () => {
    fake.enqueue(
      {
        kind: 'completion',
        toolCalls: [toolCall('remember', '{"content":"x","source":"the-ceo-canary"}')],
      },
      { kind: 'completion', toolCalls: [toolCall('remember', '{"content":"lunch is at noon"}')] },
      { kind: 'completion', content: 'Remembered.' },
    );
    const before = fake.requests.length;
    const result = await say('remember lunch is at noon');
    expect(result.status).toBe('succeeded');
    const kinds = result.steps
      .filter((s) => s.kind === 'observation')
      .map((s) => s.observation?.['kind']);
    expect(kinds).toEqual(['invalid_input', 'result']);
    const second = fake.requests[before + 1]?.json as {
      messages: { role: string; content: string }[];
    };
    const refusal = second.messages.find((m) => m.role === 'tool')?.content ?? '';
    expect(refusal).toContain('unknown field `source`; the accepted fields are: content');
    expect(refusal).not.toContain('the-ceo-canary');
  });

  it('a model that keeps calling tools: the third request carries no tools, structurally', async () => {
    fake.enqueue(
      { kind: 'completion', toolCalls: [toolCall('recall', '{"query":"a"}')] },
      { kind: 'completion', toolCalls: [toolCall('recall', '{"query":"b"}')] },
      { kind: 'completion', content: 'Here is what I found.' },
    );
    const before = fake.requests.length;
    const result = await say('look around');
    expect(result.status).toBe('succeeded');
    const sent = fake.requests.slice(before);
    expect(sent).toHaveLength(3);
    expect(requestTools(sent[0]?.json)).toEqual([
      'request_input',
      'progress',
      'commit',
      'conversation_search',
      'remember',
      'recall',
      'amend',
      'forget',
    ]);
    expect(requestTools(sent[1]?.json)).toEqual([
      'request_input',
      'progress',
      'commit',
      'conversation_search',
      'remember',
      'recall',
      'amend',
      'forget',
    ]);
    const third = sent[2]?.body ?? '';
    expect(third).not.toContain('"tools"');
    expect(third).not.toContain('"tool_choice"');
    const requests = result.steps.filter((s) => s.kind === 'model_request');
    expect(requests[2]?.data?.['offered']).toEqual([]);
  });

  it('a 429 then success: the turn retries and succeeds', async () => {
    fake.enqueue(
      { kind: 'error', status: 429, message: 'Rate limit reached', retryAfter: '0' },
      { kind: 'completion', content: 'Hello after a pause.' },
    );
    const before = fake.requests.length;
    const result = await say('hello');
    expect(result.status).toBe('succeeded');
    expect(result.reply).toBe('Hello after a pause.');
    expect(fake.requests.length - before).toBe(2);
  });

  it('a storm of 500s ends the run as failed with the provider’s message, never the key', async () => {
    // Four attempts per call (the default policy): every one of them fails.
    const storm = Array.from({ length: 4 }, () => ({
      kind: 'error' as const,
      status: 500,
      message: `upstream exploded (key was ${CANARY_KEY})`,
    }));
    fake.enqueue(...storm);
    const result = await say('hello again');
    expect(result.status).toBe('failed');
    expect(result.reason).toContain('model call failed');
    expect(result.reason).toContain('upstream exploded');
    expect(result.reason).not.toContain(CANARY_KEY);
    expect(fake.pending).toBe(0);
  });

  it('the canary API key appears in no step, no run reason and no text column of the database', async () => {
    const dump = await dumpTextColumns(mesh.db);
    expect(dump.length).toBeGreaterThan(1000);
    expect(dump).not.toContain(CANARY_KEY);
    expect(dump).not.toContain(CANARY_KEY.slice(3));
  });
});
