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
import { manualClock, systemClock } from '../../src/tool/clock.ts';
import { createRegistry } from '../../src/tool/registry.ts';
import { testDatabases } from '../support/db.ts';
import { callIdOf, makeAgent, runtimeFor } from '../support/run.ts';
import { testDefinition } from '../support/tool.ts';
import { createOutbox } from '../../src/outbound/outbox.ts';
import { outboundStore } from '../../src/store/outbound-events.ts';
import { services, type ToolContext } from '../../src/tool/context.ts';
import {
  deliveryOutput,
  OUTBOX,
  OUTBOX_NEED,
  type EffectReceipt,
} from '../../src/tool/outbound.ts';
import type { RunRecord, StepRecord } from '../../src/run/records.ts';

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

  /** Where the outbound tool's effect goes: what it was sent, and a hook after each send. */
  const wire: { sent: string[]; afterSend?: () => unknown } = { sent: [] };
  /** An effect tool that delivers through the outbound machinery (a remote MCP tool's path). */
  const sender = testDefinition('send', {
    class: 'effect',
    replay: 'effectful',
    needs: [OUTBOX_NEED],
    execute: async (ctx: ToolContext) => {
      const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
        name: 'message',
        kind: 'test.send',
        target: 'channel #ops',
        payload: { text: 'hello' },
        async send(key): Promise<EffectReceipt> {
          wire.sent.push(ctx.callId);
          await wire.afterSend?.();
          return { externalId: `m-${key.uuid.slice(0, 8)}`, link: null as never };
        },
      });
      return deliveryOutput('the message', delivery, (r) => ({ text: `sent ${r.externalId}` }));
    },
  });
  /** An effect that takes two seconds of `clock` to post. */
  const slowPost = (clock: ReturnType<typeof manualClock>) =>
    testDefinition('slow_post', {
      class: 'effect',
      replay: 'effectful',
      execute: async () => {
        clock.advance(2_000);
        return { text: 'posted' };
      },
    });
  /** Settles `calls` as one round under a wall clock of one second, which `clock` runs out. */
  const clockedRound = (
    ctx: Pick<
      Parameters<typeof settleCalls>[0]['ctx'],
      'ledger' | 'lease' | 'registry' | 'runtime'
    >,
    clock: ReturnType<typeof manualClock>,
    calls: ReturnType<typeof call>[],
  ) =>
    settleCalls({
      ctx,
      calls,
      steps: [],
      usage: usageFrom({}),
      budget: budgetFrom({ wallClockMs: 1_000 }),
      startedAt: clock.now(),
      clock,
      signal: new AbortController().signal,
    });
  /** The same tool declaring its one effect from its arguments, as a remote MCP tool does. */
  const declaring = {
    ...sender,
    tool: { ...sender.tool, name: 'send_declared' },
    declaredEffect: () => ({
      name: 'message',
      kind: 'test.send',
      target: 'channel #ops',
      payload: { text: 'hello' },
      reconciles: false,
    }),
  };
  const outboundRuntime = (run: RunRecord, signal: AbortSignal, on: Db = db) => ({
    ...runtimeFor(run, signal),
    services: services([[OUTBOX, createOutbox({ store: outboundStore(on) })]]),
  });
  /** The outbound events of a run, by call: state and attempts. */
  const effectsOf = async (runId: string) =>
    (await outboundStore(db).forRun(runId)).map((e) => `${e.callId}:${e.state}:${e.attempts}`);

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
    agentId = await makeAgent(db);
  });
  afterAll(() => dispose());

  /** The database, counting the statements sent through it. */
  function countingDb(): Db {
    return {
      ...db,
      query: (sql, params) => {
        statements++;
        return db.query(sql, params);
      },
      transaction: (fn) => db.transaction(fn),
    };
  }

  /** A ledger whose store counts the statements it sends. */
  function countingLedger(): RunLedger {
    return new RunLedger(runStore(countingDb()));
  }

  /** A script run created leased to `owner`, and its lease. */
  async function leasedRun(ledger: RunLedger, owner: string, budget: Record<string, number>) {
    const run = await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget,
      lease: { owner, leaseMs: 60_000 },
    });
    const lease: Lease = { runId: run.id, owner, epoch: run.leaseEpoch };
    return { run, lease };
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
    const { run, lease } = await leasedRun(ledger, 'counter', {});
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

  /** Settles `calls` as one round after a lead note; what each call saw on record when it ran. */
  async function round(calls: ReturnType<typeof call>[]) {
    const ledger = countingLedger();
    const { run, lease } = await leasedRun(ledger, 'rounds', {});
    const before: Record<string, string[]> = {};
    const look = async (id: string) => {
      // Read through another ledger: the counting one counts the round's own statements only.
      const steps = await new RunLedger(runStore(db)).steps(run.id);
      before[id] = steps.map((s) => `${s.kind}:${callIdOf(s) || '-'}:${s.status}`);
    };
    statements = 0;
    const settled = await settleCalls({
      ctx: {
        ledger,
        lease,
        registry,
        runtime: runtimeFor(run, new AbortController().signal),
        hooks: { at: (point, c) => (point === 'after_record' ? look(c.id) : undefined) },
      },
      calls,
      steps: [],
      usage: usageFrom({}),
      budget: budgetFrom({}),
      startedAt: new Date(),
      clock: systemClock,
      signal: new AbortController().signal,
      lead: [{ kind: 'step', step: { kind: 'note', data: { round: 1 } } }],
      leadUsage: { rounds: 1 },
    });
    const written = statements;
    const steps = await ledger.steps(run.id);
    if (settled.kind !== 'settled') throw new Error(settled.kind);
    expect(settled.steps).toEqual(steps);
    expect(usageFrom((await ledger.run(run.id))?.usage ?? {}).toolCalls).toBe(calls.length);
    const listed = steps.map((s) => `${s.seq}:${s.kind}:${callIdOf(s) || '-'}:${s.status}`);
    return { statements: written, before, listed, steps };
  }

  it('writes a round of three calls in two statements: the lead and the stamp before any call runs, then every end', async () => {
    const r = await round([call('q1', 'lookup'), call('q2', 'lookup'), call('e1', 'post')]);
    expect(r.statements).toBe(2);
    // The commit boundary holds for the whole round: the effect is stamped before anything runs.
    const first = ['note:-:completed', 'tool_call:e1:started'];
    expect(r.before).toEqual({ q1: first, q2: first, e1: first });
    expect(r.listed).toEqual([
      '1:note:-:completed',
      '2:tool_call:e1:completed',
      '3:tool_call:q1:completed',
      '4:observation:q1:completed',
      '5:tool_call:q2:completed',
      '6:observation:q2:completed',
      '7:observation:e1:completed',
    ]);
    expect(r.steps.filter((s) => s.kind === 'tool_call' && s.committedAt !== null)).toHaveLength(1);
  });

  it("writes an effect's end before the round's next call starts, so a crash there cannot make it unknown", async () => {
    const r = await round([call('e1', 'post'), call('e2', 'post')]);
    expect(r.statements).toBe(3);
    expect(r.before['e1']).toEqual([
      'note:-:completed',
      'tool_call:e1:started',
      'tool_call:e2:started',
    ]);
    expect(r.before['e2']).toEqual([
      'note:-:completed',
      'tool_call:e1:completed',
      'tool_call:e2:started',
      'observation:e1:completed',
    ]);
  });

  /** One round of `calls` of the outbound tools after a lead note, for `run` held under `lease`. */
  const outboundRound = (
    ledger: RunLedger,
    run: RunRecord,
    lease: Lease,
    calls: ReturnType<typeof call>[],
    options: {
      readonly steps?: readonly StepRecord[];
      readonly signal?: AbortSignal;
      readonly on?: Db;
      readonly hooks?: { at: (point: CallPoint, c: { id: string }) => Promise<void> };
    } = {},
  ) =>
    settleCalls({
      ctx: {
        ledger,
        lease,
        registry: createRegistry([sender, declaring]),
        runtime: outboundRuntime(run, options.signal ?? new AbortController().signal, options.on),
        ...(options.hooks ? { hooks: options.hooks } : {}),
      },
      calls,
      steps: options.steps ?? [],
      usage: usageFrom({}),
      budget: budgetFrom({}),
      startedAt: new Date(),
      clock: systemClock,
      signal: new AbortController().signal,
      lead: [{ kind: 'step', step: { kind: 'note', data: { round: 1 } } }],
    });

  it('settles a delivered effect in the commit of its end: an outbound effect adds one commit to its round', async () => {
    const ledger = countingLedger();
    const { run, lease } = await leasedRun(ledger, 'outbound', {});
    const seen: Record<string, string[]> = {};
    wire.afterSend = async () => {
      seen['sent'] = await effectsOf(run.id);
    };
    statements = 0;
    const settled = await outboundRound(ledger, run, lease, [call('s1', 'send')], {
      on: countingDb(),
      hooks: {
        at: async (point) => {
          if (point === 'after_execute') seen['ran'] = await effectsOf(run.id);
        },
      },
    });
    wire.afterSend = undefined;
    expect(settled.kind).toBe('settled');
    // Three statements: the round's lead with the stamp; the effect recorded with its first
    // attempt begun; the call's end with the effect marked delivered (before: five).
    expect(statements).toBe(3);
    expect(seen['sent']).toEqual(['s1:delivering:1']);
    // The call has returned and its end is not written yet: neither is its delivery.
    expect(seen['ran']).toEqual(['s1:delivering:1']);
    expect(await effectsOf(run.id)).toEqual(['s1:delivered:1']);
    const [event] = await outboundStore(db).forRun(run.id);
    expect(event?.externalId).toMatch(/^m-/);
    const steps = await ledger.steps(run.id);
    expect(steps.map((s) => `${s.kind}:${callIdOf(s) || '-'}:${s.status}`)).toEqual([
      'note:-:completed',
      'tool_call:s1:completed',
      'observation:s1:completed',
    ]);
  });

  it("records a declared effect begun with its call's stamp: a round of one remote effect is two commits", async () => {
    const ledger = countingLedger();
    const { run, lease } = await leasedRun(ledger, 'declared', {});
    const seen: Record<string, string[]> = {};
    const settle = (steps: readonly StepRecord[], id: string) =>
      outboundRound(ledger, run, lease, [call(id, 'send_declared')], {
        steps,
        on: countingDb(),
        hooks: {
          at: async (point, c) => {
            if (point === 'after_record') seen[c.id] = await effectsOf(run.id);
          },
        },
      });
    statements = 0;
    const first = await settle([], 'd1');
    if (first.kind !== 'settled') throw new Error(first.kind);
    // The stamp and the begun effect in one commit, the end with its delivery in the other.
    expect(statements).toBe(2);
    // On record before the call ran: the stamp's commit recorded the effect, begun.
    expect(seen['d1']).toEqual(['d1:delivering:1']);
    expect(await effectsOf(run.id)).toEqual(['d1:delivered:1']);
    const [event] = await outboundStore(db).forRun(run.id);
    expect(event).toMatchObject({ stepSeq: 2, toolName: 'send_declared', kind: 'test.send' });
    expect(wire.sent.filter((c) => c === 'd1')).toHaveLength(1);

    // A round that numbers its stamp wrongly (it was not told of a step written meanwhile):
    // the effect is not recorded with the stamp, and the outbox records it itself, once.
    statements = 0;
    const second = await settle(first.steps.slice(0, 1), 'd2');
    expect(second.kind).toBe('settled');
    expect(statements).toBe(3);
    expect(seen['d2']).toEqual(['d1:delivered:1']);
    expect(await effectsOf(run.id)).toEqual(['d1:delivered:1', 'd2:delivered:1']);
    expect(wire.sent.filter((c) => c === 'd2')).toHaveLength(1);
  });

  /**
   * A holder of `run` that dies (its driver throws) at `point` of the run's first call; the run's
   * lease is then expired, so the next worker resumes it.
   */
  async function dieAt(
    ledger: RunLedger,
    run: RunRecord,
    point: CallPoint,
    drivers: Pick<Parameters<typeof scriptDriver>[0], 'registryFor' | 'runtimeFor'>,
  ): Promise<void> {
    const claimed = await ledger.claim('doomed', 60_000);
    expect(claimed?.id).toBe(run.id);
    const dying = scriptDriver({
      ...drivers,
      hooks: {
        at(at: CallPoint) {
          if (at === point) throw new Error('SIGKILL');
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
    await db.query(`update runs set lease_expires_at = now() - interval '1 second' where id = $1`, [
      run.id,
    ]);
  }

  it('never sends a declared effect whose holder died between its stamp and its send: reported unknown', async () => {
    const ledger = new RunLedger(runStore(db));
    const run = await scriptRun(ledger, [call('x1', 'send_declared')]);
    const registryFor = () => createRegistry([declaring]);
    const runtime = (r: RunRecord, signal: AbortSignal) => outboundRuntime(r, signal);
    await dieAt(ledger, run, 'after_record', { registryFor, runtimeFor: runtime });
    // The stamp's commit recorded the effect begun; nothing was sent.
    expect(await effectsOf(run.id)).toEqual(['x1:delivering:1']);
    const driver = scriptDriver({
      registryFor,
      runtimeFor: (r, signal) => outboundRuntime(r, signal),
    });
    await new Worker({ ledger, drivers: [driver], owner: 'resumer' }).runOnce();
    // The resumer cannot ask MCP what a call did: unknown, and never sent.
    expect(wire.sent.filter((c) => c === 'x1')).toHaveLength(0);
    expect(await effectsOf(run.id)).toEqual(['x1:unknown:1']);
    const steps = await ledger.steps(run.id);
    const observed = steps.find((s) => s.kind === 'observation' && callIdOf(s) === 'x1');
    expect(observed?.kind === 'observation' && observed.observation['kind']).toBe(
      'unknown_outcome',
    );
    expect((await ledger.run(run.id))?.status).toBe('succeeded');
  });

  it('withdraws a declared effect its round never ran: failed, attempts 0, nothing sent', async () => {
    const clock = manualClock(new Date());
    const slow = slowPost(clock);
    const ledger = new RunLedger(runStore(db));
    const { run, lease } = await leasedRun(ledger, 'withdrawing', { wallClockMs: 1_000 });
    const settled = await clockedRound(
      {
        ledger,
        lease,
        registry: createRegistry([slow, declaring]),
        runtime: outboundRuntime(run, new AbortController().signal),
      },
      clock,
      [call('w1', 'slow_post'), call('w2', 'send_declared')],
    );
    expect(settled).toMatchObject({ kind: 'budget_exhausted' });
    expect(wire.sent.filter((c) => c === 'w2')).toHaveLength(0);
    const [event] = await outboundStore(db).forRun(run.id);
    expect(event).toMatchObject({ callId: 'w2', state: 'failed', attempts: 0 });
    expect(event?.lastError).toMatch(/^not run: .*nothing was sent$/);
    const steps = await ledger.steps(run.id);
    const observed = steps.find((s) => s.kind === 'observation' && callIdOf(s) === 'w2');
    expect(observed?.kind === 'observation' && observed.observation['kind']).toBe('not_run');
  });

  it('marks an effect delivered even when the end that was to carry it cannot be written', async () => {
    const ledger = new RunLedger(runStore(db));
    const { run, lease } = await leasedRun(ledger, 'lapsing', {});
    // The lease is taken over while the effect is on the wire: the call's end is refused.
    wire.afterSend = () =>
      db.query(`update runs set lease_epoch = lease_epoch + 1 where id = $1`, [run.id]);
    const settling = outboundRound(ledger, run, lease, [call('s2', 'send')]);
    await expect(settling).rejects.toMatchObject({ code: 'lease_lost' });
    wire.afterSend = undefined;
    // Nothing of the call's end is on record, but what the provider answered is.
    expect(
      (await ledger.steps(run.id)).map((s) => `${s.kind}:${callIdOf(s) || '-'}:${s.status}`),
    ).toEqual(['note:-:completed', 'tool_call:s2:started']);
    expect(await effectsOf(run.id)).toEqual(['s2:delivered:1']);
  });

  it('marks an effect delivered when its run is stopped after the delivery', async () => {
    const ledger = new RunLedger(runStore(db));
    const { run, lease } = await leasedRun(ledger, 'stopping', {});
    const stop = new AbortController();
    wire.afterSend = () => stop.abort(new Error('worker stopping'));
    const settled = await outboundRound(ledger, run, lease, [call('s3', 'send')], {
      signal: stop.signal,
    }).catch((error: unknown) => error);
    wire.afterSend = undefined;
    expect(settled).toMatchObject({ code: 'run_interrupted' });
    expect(await effectsOf(run.id)).toEqual(['s3:delivered:1']);
  });

  it('records a stamped call the round never ran as not run when the wall clock ran out first', async () => {
    const clock = manualClock(new Date());
    const slow = createRegistry([slowPost(clock)]);
    const ledger = new RunLedger(runStore(db));
    const { run, lease } = await leasedRun(ledger, 'clocked', { wallClockMs: 1_000 });
    const settled = await clockedRound(
      { ledger, lease, registry: slow, runtime: runtimeFor(run, new AbortController().signal) },
      clock,
      [call('p1', 'slow_post'), call('p2', 'slow_post')],
    );
    expect(settled).toMatchObject({
      kind: 'budget_exhausted',
      exhaustion: { budget: 'wallClockMs' },
    });
    const steps = await ledger.steps(run.id);
    expect(steps.map((s) => `${s.kind}:${callIdOf(s)}:${s.status}`)).toEqual([
      'tool_call:p1:completed',
      'tool_call:p2:refused',
      'observation:p1:completed',
      'observation:p2:completed',
    ]);
    const notRun = steps.at(-1);
    expect(notRun?.kind === 'observation' && notRun.observation['kind']).toBe('not_run');
    expect(notRun?.kind === 'observation' && notRun.observation['text']).toMatch(
      /^Not run: budget exhausted: wall clock/,
    );
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
    // The first holder dies after the query ran and before anything about it was written.
    await dieAt(ledger, run, 'after_execute', { registryFor: () => registry, runtimeFor });
    expect(executed).toEqual(['lookup:k1']);
    // The round's first commit stamped the effect; nothing about the query was written.
    expect((await ledger.steps(run.id)).map((s) => [s.seq, s.kind, callIdOf(s), s.status])).toEqual(
      [[1, 'tool_call', 'k2', 'started']],
    );

    const driver = scriptDriver({ registryFor: () => registry, runtimeFor });
    await new Worker({ ledger, drivers: [driver], owner: 'resumer' }).runOnce();
    // The query runs again; the stamped effect is never run by the resumer: it is reported.
    expect(executed).toEqual(['lookup:k1', 'lookup:k1']);
    const steps = await ledger.steps(run.id);
    expect(steps.map((s) => [s.seq, s.kind, callIdOf(s), s.status])).toEqual([
      [1, 'tool_call', 'k2', 'unknown'],
      [2, 'tool_call', 'k1', 'completed'],
      [3, 'observation', 'k1', 'completed'],
      [4, 'observation', 'k2', 'completed'],
    ]);
    expect((await ledger.run(run.id))?.reason).toBe(
      'resumed after an interruption; outcome unknown for post (k2)',
    );
  });
});
