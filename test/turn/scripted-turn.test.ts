import { describe, expect, it } from 'vitest';
import { dataOf } from '../support/run.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import { listMemories } from '../../src/store/memories.ts';
import { testDatabases } from '../support/db.ts';
import { scriptedAgent, suiteMesh } from '../support/turn.ts';

describe.each(testDatabases())('a turn with a scripted model on $name', (database) => {
  const meshOf = suiteMesh(database);

  it('remembers, then answers against the ledger; the memory’s provenance is the inbound message', async () => {
    const mesh = meshOf();
    const agentId = await scriptedAgent(mesh, {
      rules: [
        {
          match: 'remember that (.+)',
          rounds: [
            { toolCalls: [{ name: 'remember', arguments: { content: '$1' } }] },
            { content: 'Noted: $1.' },
          ],
        },
      ],
      fallback: { content: 'ok' },
    });
    const result = await chat(mesh, {
      agentId,
      actor: 'ada',
      body: 'remember that the deploy window is Friday',
    });
    expect(result.status).toBe('succeeded');
    expect(result.reply).toBe('Noted: the deploy window is Friday.');
    expect(result.steps.map((s) => s.kind)).toEqual([
      'model_request',
      'model_response',
      'tool_call',
      'observation',
      'model_request',
      'model_response',
      'reply',
    ]);
    const firstRequest = dataOf(result.steps[0]);
    expect(firstRequest?.['offered']).toEqual([
      'request_input',
      'progress',
      'commit',
      'conversation_search',
      // A new agent has no memory: recall, amend and forget wait for one.
      'remember',
    ]);
    expect(firstRequest?.['estimate']).toMatchObject({
      tools: expect.any(Number) as number,
      current: expect.any(Number) as number,
    });
    const secondRequest = dataOf(result.steps[4]);
    expect(JSON.stringify(secondRequest?.['ledger'])).toContain('remembered memory');
    const [memory] = await listMemories(mesh.db, agentId);
    expect(memory?.content).toBe('the deploy window is Friday');
    expect(memory?.provenance).toMatchObject({ kind: 'inbound_message', actor: 'ada' });
    const run = await mesh.ledger.run(result.runId);
    expect(memory?.sourceMessageId).toBe(run?.inboundMessageId);

    // With a memory to act on, the next turn is offered the verbs that read and change one.
    const next = await chat(mesh, { agentId, actor: 'ada', body: 'hello' });
    expect(dataOf(next.steps[0])?.['offered']).toEqual(
      expect.arrayContaining(['remember', 'recall', 'amend', 'forget']),
    );
  });
});
