import { describe, expect, it } from 'vitest';
import { turnEnvironment } from '../../src/app/conversations/turns.ts';
import { Worker } from '../../src/run/worker.ts';
import { listMemories } from '../../src/store/memories.ts';
import { turnDriver } from '../../src/turn/engine.ts';
import { receiveMessage } from '../../src/turn/intake.ts';
import { testDatabases } from '../support/db.ts';
import { scriptedAgent, suiteMesh } from '../support/turn.ts';

class Crash extends Error {}

describe.each(testDatabases())('an interrupted turn on $name', (database) => {
  const meshOf = suiteMesh(database);

  it('resumes on another worker without repeating what completed: an internal verb is not written twice', async () => {
    const mesh = meshOf();
    const agentId = await scriptedAgent(mesh, {
      rules: [
        {
          match: 'remember (.+)',
          rounds: [
            { toolCalls: [{ name: 'remember', arguments: { content: '$1' } }] },
            { content: 'Saved.' },
          ],
        },
      ],
    });
    const owner = 'doomed-worker';
    const { run } = await receiveMessage(mesh.ledger, {
      agentId,
      actor: 'ada',
      body: 'remember the release is on the 9th',
      lease: { owner, leaseMs: 60_000 },
    });
    // The first worker writes the memory, then dies before recording the observation.
    const dying = turnDriver({
      ...turnEnvironment(mesh),
      hooks: {
        at(point) {
          if (point === 'after_execute') throw new Crash('process died');
        },
      },
    });
    await expect(
      dying.drive({
        run,
        lease: { runId: run.id, owner, epoch: run.leaseEpoch },
        ledger: mesh.ledger,
        signal: new AbortController().signal,
      }),
    ).rejects.toThrow('process died');
    expect(await listMemories(mesh.db, agentId)).toHaveLength(1);
    await mesh.db.query(
      `update runs set lease_expires_at = now() - interval '1 second' where id = $1`,
      [run.id],
    );

    const worker = new Worker({
      ledger: mesh.ledger,
      drivers: [turnDriver(turnEnvironment(mesh))],
    });
    expect(await worker.runOnce()).toBe(true);
    const finished = await mesh.ledger.run(run.id);
    expect(finished?.status).toBe('succeeded');
    const steps = await mesh.ledger.steps(run.id);
    expect(steps.filter((s) => s.kind === 'tool_call')).toHaveLength(1);
    expect(steps.filter((s) => s.kind === 'observation')).toHaveLength(1);
    expect(steps.filter((s) => s.kind === 'model_response')).toHaveLength(2);
    expect(steps.at(-1)?.kind).toBe('reply');
    const memories = await listMemories(mesh.db, agentId);
    expect(memories).toHaveLength(1);
    expect(memories[0]?.content).toBe('the release is on the 9th');
  });
});
