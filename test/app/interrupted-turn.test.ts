import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentOperation } from '../../src/app/agents/operations.ts';
import { addModelProvider } from '../../src/app/backends/model-providers.ts';
import { meshWorker } from '../../src/app/conversations/turns.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import { receiveMessage } from '../../src/turn/intake.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';

/*
 * A turn whose holders were lost more often than a worker allows is not driven again: the worker
 * that claims it ends it failed and the conversation is told, by the agent, why and what was done.
 * How the count grows with real killed processes is test/run/interrupted-runs.test.ts.
 */
describe.each(testDatabases())('a turn interrupted too often, on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    dispose = async () => {
      await mesh.close();
      await opened.dispose();
    };
    await addModelProvider(mesh, {
      name: 'scripted',
      kind: 'scripted',
      script: { rules: [], fallback: { content: 'Should never be said.' } },
    });
    await invokeOperation(
      mesh,
      createAgentOperation,
      { name: 'ada', provider: 'scripted', model: 'm' },
      { actor: 'operator:test' },
    );
  }, 60_000);

  afterAll(() => dispose?.());

  it('ends failed with a notice in its conversation, and the model is never asked', async () => {
    const agent = await mesh.db.query<{ id: string }>(`select id from agents where name = 'ada'`);
    // A holder that took the turn and died with it, after three earlier holders were lost.
    const { run, conversation } = await receiveMessage(mesh.ledger, {
      agentId: agent.rows[0]!.id,
      actor: 'user:grace',
      body: 'summarise the incident',
      lease: { owner: 'dead-holder', leaseMs: 60_000 },
    });
    await mesh.db.query(
      `update runs set interruptions = 3, lease_expires_at = now() - interval '1 second' where id = $1`,
      [run.id],
    );
    const worker = meshWorker(mesh, () => undefined);
    expect(await worker.runOnce()).toBe(true);

    const ended = await mesh.ledger.run(run.id);
    expect(ended?.status).toBe('failed');
    expect(ended?.reason).toMatch(
      /^not resumed: the process running it died or was stopped 4 times/,
    );
    const { rows } = await mesh.db.query<{ direction: string; actor: string; body: string }>(
      'select direction, actor, body from messages where conversation_id = $1 order by created_at',
      [conversation.id],
    );
    expect(rows.map((m) => `${m.direction} ${m.actor}`)).toEqual([
      'inbound user:grace',
      'outbound ada',
    ]);
    expect(rows[1]?.body).toContain(
      'I stopped before finishing: this turn was not resumed: the process running it died or was stopped 4 times',
    );
    expect(rows[1]?.body).toContain('Done: nothing; no tool call ran.');
    const steps = await mesh.ledger.steps(run.id);
    expect(steps.map((s) => s.kind)).toEqual(['reply']);
  });
});
