import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { settleCalls } from '../../src/run/call-loop.ts';
import { budgetFrom, usageFrom } from '../../src/run/budget.ts';
import { RunLedger } from '../../src/run/ledger.ts';
import type { Lease } from '../../src/run/records.ts';
import { scriptCheckpoint, scriptDriver } from '../../src/run/script-driver.ts';
import type { CallPoint } from '../../src/run/tool-step.ts';
import { Worker } from '../../src/run/worker.ts';
import type { Db } from '../../src/store/db.ts';
import { runStore } from '../../src/store/run-store.ts';
import { systemClock } from '../../src/tool/clock.ts';
import { createRegistry } from '../../src/tool/registry.ts';
import { testDatabases } from '../support/db.ts';
import { callIdOf, makeAgent, runtimeFor } from '../support/run.ts';
import { testDefinition } from '../support/tool.ts';

const call = (id: string, name: string) => ({ id, name, arguments: '{}' });

/** The hot path: a replayable query is recorded after it ran, in one write; effects stay ahead. */
describe.each(testDatabases())('the tool-call hot path on $name', (database) => {
  let db: Db;
  let dispose: () => Promise<void>;
  let agentId: string;
  let statements = 0;
  const executed: string[] = [];
  const registry = createRegistry([
    testDefinition('lookup', {
      execute: async (ctx) => {
        executed.push(`lookup:${ctx.callId}`);
        return { text: 'found' };
      },
    }),
    testDefinition('post', {
      class: 'effect',
      replay: 'effectful',
      execute: async (ctx) => {
        executed.push(`post:${ctx.callId}`);
        return { text: 'posted' };
      },
    }),
  ]);

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
    agentId = await makeAgent(db);
  });
  afterAll(() => dispose());

  /** A ledger whose store counts the statements it sends. */
  function countingLedger(): RunLedger {
    const counted: Db = {
      ...db,
      query: (sql, params) => {
        statements++;
        return db.query(sql, params);
      },
      transaction: (fn) => db.transaction(fn),
    };
    return new RunLedger(runStore(counted));
  }

  async function scriptRun(ledger: RunLedger, calls: ReturnType<typeof call>[]) {
    return ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: {},
      checkpoint: scriptCheckpoint(calls),
    });
  }

  it('writes a replayable query in one statement with the usage, an effect in two', async () => {
    const ledger = countingLedger();
    const run = await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: {},
      lease: { owner: 'counter', leaseMs: 60_000 },
    });
    const lease: Lease = { runId: run.id, owner: 'counter', epoch: run.leaseEpoch };
    const settle = async (c: ReturnType<typeof call>, usage = usageFrom({})) => {
      statements = 0;
      const settled = await settleCalls({
        ctx: { ledger, lease, registry, runtime: runtimeFor(run, new AbortController().signal) },
        calls: [c],
        steps: [],
        usage,
        budget: budgetFrom({}),
        startedAt: new Date(),
        clock: systemClock,
        signal: new AbortController().signal,
      });
      if (settled.kind !== 'settled') throw new Error(settled.kind);
      return { settled, statements };
    };
    const query = await settle(call('q1', 'lookup'));
    expect(query.statements).toBe(1);
    expect(query.settled.steps.map((s) => [s.kind, s.status])).toEqual([
      ['tool_call', 'completed'],
      ['observation', 'completed'],
    ]);
    const effect = await settle(call('e1', 'post'), query.settled.usage);
    expect(effect.statements).toBe(2);
    // What the loop kept in memory is what the store holds, and the usage came with the writes.
    expect(await ledger.steps(run.id)).toEqual([...query.settled.steps, ...effect.settled.steps]);
    expect(usageFrom((await ledger.run(run.id))?.usage ?? {}).toolCalls).toBe(2);
  });

  it('records nothing ahead of a replayable query, and stamps an effect before it runs', async () => {
    const ledger = new RunLedger(runStore(db));
    const run = await scriptRun(ledger, [call('a1', 'lookup'), call('a2', 'post')]);
    const seen: Record<string, { steps: number; committed: boolean }> = {};
    const driver = scriptDriver({
      registryFor: () => registry,
      runtimeFor,
      hooks: {
        async at(point: CallPoint, c) {
          if (point !== 'after_record') return;
          const steps = (await ledger.steps(run.id)).filter((s) => callIdOf(s) === c.id);
          const stamped = steps[0]?.kind === 'tool_call' && steps[0].committedAt !== null;
          seen[c.id] = { steps: steps.length, committed: stamped };
        },
      },
    });
    await new Worker({ ledger, drivers: [driver], owner: 'stamper' }).runOnce();
    expect(seen).toEqual({
      a1: { steps: 0, committed: false },
      a2: { steps: 1, committed: true },
    });
    expect((await ledger.run(run.id))?.status).toBe('succeeded');
  });

  it('runs a replayable query killed mid-call again on resume, and records it once', async () => {
    executed.length = 0;
    const ledger = new RunLedger(runStore(db));
    const run = await scriptRun(ledger, [call('k1', 'lookup'), call('k2', 'post')]);
    const claimed = await ledger.claim('doomed', 60_000);
    expect(claimed?.id).toBe(run.id);
    // The first holder dies after the query ran and before anything about it was written.
    const dying = scriptDriver({
      registryFor: () => registry,
      runtimeFor,
      hooks: {
        at(point: CallPoint) {
          if (point === 'after_execute') throw new Error('SIGKILL');
        },
      },
    });
    await expect(
      dying.drive({
        run: claimed ?? run,
        lease: { runId: run.id, owner: 'doomed', epoch: claimed?.leaseEpoch ?? 0 },
        ledger,
        signal: new AbortController().signal,
      }),
    ).rejects.toThrow('SIGKILL');
    expect(executed).toEqual(['lookup:k1']);
    expect(await ledger.steps(run.id)).toEqual([]);
    await db.query(`update runs set lease_expires_at = now() - interval '1 second' where id = $1`, [
      run.id,
    ]);

    const driver = scriptDriver({ registryFor: () => registry, runtimeFor });
    await new Worker({ ledger, drivers: [driver], owner: 'resumer' }).runOnce();
    expect(executed).toEqual(['lookup:k1', 'lookup:k1', 'post:k2']);
    const steps = await ledger.steps(run.id);
    expect(steps.map((s) => [s.seq, s.kind, callIdOf(s), s.status])).toEqual([
      [1, 'tool_call', 'k1', 'completed'],
      [2, 'observation', 'k1', 'completed'],
      [3, 'tool_call', 'k2', 'completed'],
      [4, 'observation', 'k2', 'completed'],
    ]);
    expect((await ledger.run(run.id))?.reason).toBeNull();
  });
});
