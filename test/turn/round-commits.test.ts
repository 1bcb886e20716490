import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { turnEnvironment } from '../../src/app/conversations/turns.ts';
import { RunLedger } from '../../src/run/ledger.ts';
import type { RunStore } from '../../src/run/run-store.ts';
import { runStore } from '../../src/store/run-store.ts';
import { turnDriver } from '../../src/turn/engine.ts';
import { receiveMessage } from '../../src/turn/intake.ts';
import { testDatabases } from '../support/db.ts';
import { scriptedAgent, testInstanceKey } from '../support/turn.ts';

/** A turn's writes of steps, each a list of the kinds it wrote (one write is one commit). */
function recordingStore(store: RunStore, writes: string[][]): RunStore {
  return {
    ...store,
    appendSteps: async (lease, batch) => {
      const written = await store.appendSteps(lease, batch);
      writes.push(written.map((s) => s.kind));
      return written;
    },
    appendStep: async (lease, step, usage) => {
      const written = await store.appendStep(lease, step, usage);
      writes.push([written.kind]);
      return written;
    },
  };
}

describe.each(testDatabases())('a turn’s tool rounds on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  let agentId: string;
  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    dispose = () => opened.dispose();
    agentId = await scriptedAgent(mesh, {
      rules: [
        {
          match: 'note (.+)',
          rounds: [
            { toolCalls: [{ name: 'recall', arguments: { query: '$1' } }] },
            { toolCalls: [{ name: 'remember', arguments: { content: '$1' } }] },
            { content: 'Noted.' },
          ],
        },
      ],
    });
  });
  afterAll(() => dispose());

  async function start(body: string, owner: string) {
    const { run } = await receiveMessage(mesh.ledger, {
      agentId,
      actor: 'ada',
      body,
      lease: { owner, leaseMs: 60_000 },
    });
    return { run, lease: { runId: run.id, owner, epoch: run.leaseEpoch } };
  }

  it('writes each tool round in two commits: the response with its stamps, then its ends with the next request', async () => {
    const writes: string[][] = [];
    const ledger = new RunLedger(recordingStore(runStore(mesh.db), writes));
    const { run, lease } = await start('note the freeze is Monday', 'rounds');
    const end = await turnDriver(turnEnvironment(mesh)).drive({
      run,
      lease,
      ledger,
      signal: new AbortController().signal,
    });
    expect(end).toEqual({ status: 'succeeded', reason: null });
    expect(writes).toEqual([
      ['model_request'],
      // Round 1: recall is a replayable query, recorded after it ran (no stamp ahead).
      ['model_response'],
      ['tool_call', 'observation', 'model_request'],
      // Round 2: remember is recorded ahead, with the response that asked for it.
      ['model_response', 'tool_call'],
      ['observation', 'model_request'],
      ['model_response'],
    ]);
    // What the turn worked from is what the store holds: the steps in the order written.
    const steps = await mesh.ledger.steps(run.id);
    expect(steps.map((s) => s.seq)).toEqual(steps.map((_, i) => i + 1));
    expect(steps.map((s) => s.kind)).toEqual([...writes.flat(), 'reply']);
  });

  it('keeps a round’s ends on record when the write of the next request fails', async () => {
    const store = runStore(mesh.db);
    let failed = false;
    const ledger = new RunLedger({
      ...store,
      appendSteps: async (lease, batch) => {
        const second = batch.steps.some(
          (w) => w.step.kind === 'model_request' && w.step.data['round'] === 2,
        );
        if (second && !failed) {
          failed = true;
          throw new Error('the connection dropped');
        }
        return store.appendSteps(lease, batch);
      },
    });
    const { run, lease } = await start('note the launch is Friday', 'dropping');
    await expect(
      turnDriver(turnEnvironment(mesh)).drive({
        run,
        lease,
        ledger,
        signal: new AbortController().signal,
      }),
    ).rejects.toThrow('the connection dropped');
    // The recall ran and its end was held for the second request; the turn's way out wrote it.
    const steps = await mesh.ledger.steps(run.id);
    expect(steps.map((s) => `${s.kind}:${s.status}`)).toEqual([
      'model_request:completed',
      'model_response:completed',
      'tool_call:completed',
      'observation:completed',
    ]);
  });
});
