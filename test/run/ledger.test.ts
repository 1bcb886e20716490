import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunLedger } from '../../src/run/ledger.ts';
import { runStore } from '../../src/store/run-store.ts';
import { scriptCheckpoint, scriptDriver } from '../../src/run/script-driver.ts';
import { Worker } from '../../src/run/worker.ts';
import type { Db } from '../../src/store/db.ts';
import type { Lease } from '../../src/run/records.ts';
import { getArtifact } from '../../src/store/artifacts.ts';
import { claimRunnable, LeaseLostError } from '../../src/store/runs.ts';
import type { Definition } from '../../src/tool/definition.ts';
import { manualClock } from '../../src/tool/clock.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { artifactId, observation } from '../../src/tool/observation.ts';
import { createRedactor } from '../../src/tool/redaction.ts';
import { createRegistry } from '../../src/tool/registry.ts';
import { testDatabases } from '../support/db.ts';
import { callIdOf, makeAgent, observationOf, runtimeFor } from '../support/run.ts';
import { testDefinition } from '../support/tool.ts';

const call = (id: string, name: string, args = '{}') => ({ id, name, arguments: args });

describe.each(testDatabases())('the run ledger on $name', (database) => {
  let db: Db;
  let dispose: () => Promise<void>;
  let ledger: RunLedger;
  let agentId: string;
  const executed: string[] = [];

  const definitions: Definition[] = [
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
    testDefinition('stall', {
      class: 'effect',
      replay: 'effectful',
      // Like a fetch given the run's signal: it settles only when the run is stopped.
      execute: (ctx) =>
        new Promise((_resolve, reject) => {
          executed.push(`stall:${ctx.callId}`);
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error));
        }),
    }),
    testDefinition('dump', {
      execute: async () => ({ text: `HEAD${'é'.repeat(20_000)}TAIL` }),
    }),
  ];
  const registry = createRegistry(definitions);
  const driver = scriptDriver({ registryFor: () => registry, runtimeFor });

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
    ledger = new RunLedger(runStore(db));
    agentId = await makeAgent(db);
  });
  afterAll(() => dispose());

  async function leasedRun(budget: Record<string, number> = {}) {
    const run = await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget,
      lease: { owner: 'test-owner', leaseMs: 60_000 },
    });
    const lease: Lease = { runId: run.id, owner: 'test-owner', epoch: run.leaseEpoch };
    return { run, lease };
  }

  it('writes the commit stamp and the call step in one transaction before the effect runs', async () => {
    const { run, lease } = await leasedRun();
    expect(run.committedAt).toBeNull();
    const step = await ledger.recordToolCall(lease, call('c1', 'post'), {
      class: 'effect',
      replay: 'effectful',
    });
    expect(step.committedAt).not.toBeNull();
    expect(step.status).toBe('started');
    expect((await ledger.run(run.id))?.committedAt).not.toBeNull();
  });

  it('does not stamp replayable or internal calls', async () => {
    const { run, lease } = await leasedRun();
    const step = await ledger.recordToolCall(lease, call('c1', 'lookup'), {
      class: 'query',
      replay: 'replayable',
    });
    expect(step.committedAt).toBeNull();
    expect((await ledger.run(run.id))?.committedAt).toBeNull();
  });

  it('stores a large observation as an artifact and keeps head, tail and the artifact id', async () => {
    const { run, lease } = await leasedRun();
    const callStep = await ledger.recordToolCall(lease, call('c1', 'dump'), {
      class: 'query',
      replay: 'replayable',
    });
    const text = `HEAD${'é'.repeat(20_000)}TAIL`;
    const { observation: stored, step } = await ledger.recordObservation(
      lease,
      callStep,
      observation({ kind: 'result', text }),
    );
    expect(stored.truncated).toBeDefined();
    expect(stored.truncated?.totalBytes).toBe(Buffer.byteLength(text));
    expect(stored.text.startsWith('HEAD')).toBe(true);
    expect(stored.text.endsWith('TAIL')).toBe(true);
    expect(Buffer.byteLength(stored.text)).toBeLessThan(16 * 1024 + 200);
    expect(stored.text).not.toContain('\uFFFD');
    const artifact = await getArtifact(db, stored.truncated?.artifactId ?? '');
    expect(artifact?.runId).toBe(run.id);
    expect(artifact?.stepSeq).toBe(step.seq);
    expect(Number(artifact?.sizeBytes)).toBe(Buffer.byteLength(text));
    expect(Buffer.from(artifact?.content ?? []).toString('utf8')).toBe(text);
    expect(artifact?.sha256).toBe(createHash('sha256').update(text).digest('hex'));
    const steps = await ledger.steps(run.id);
    expect(steps.map((s) => [s.kind, s.status])).toEqual([
      ['tool_call', 'completed'],
      ['observation', 'completed'],
    ]);
    expect(observationOf(steps[1])?.['truncated']).toMatchObject({
      artifactId: stored.truncated?.artifactId,
    });
    // The whole output is one of the observation's artifacts, as stored and as read back.
    const whole = {
      artifactId: stored.truncated?.artifactId,
      kind: 'output',
      mediaType: 'text/plain; charset=utf-8',
      sizeBytes: Buffer.byteLength(text),
    };
    expect(stored.artifacts).toEqual([whole]);
    expect(observationOf(steps[1])?.['artifacts']).toEqual([whole]);
  });

  it("stores a call's bytes as artifacts of its observation step, redacting textual ones", async () => {
    const redacting = new RunLedger(runStore(db), { redactor: createRedactor(['sekrit-123']) });
    const { run, lease } = await leasedRun();
    const callStep = await redacting.recordToolCall(lease, call('c1', 'lookup'), {
      class: 'query',
      replay: 'replayable',
    });
    const png = new Uint8Array([137, 80, 78, 71, 0, 1, 2]);
    const note = Buffer.from('token sekrit-123 inside');
    const [imageId, noteId] = [randomUUID(), randomUUID()];
    const { observation: stored, step } = await redacting.recordObservation(
      lease,
      callStep,
      observation({
        kind: 'result',
        text: `picture and note`,
        artifacts: [
          { artifactId: artifactId(imageId), kind: 'image', mediaType: 'image/png', sizeBytes: 7 },
          {
            artifactId: artifactId(noteId),
            kind: 'resource',
            mediaType: 'text/plain',
            sizeBytes: note.length,
          },
        ],
      }),
      'completed',
      [
        { id: imageId, kind: 'image', mediaType: 'image/png', content: png },
        { id: noteId, kind: 'resource', mediaType: 'text/plain', content: note },
      ],
    );
    const image = await getArtifact(db, imageId);
    expect(image?.runId).toBe(run.id);
    expect(image?.stepSeq).toBe(step.seq);
    expect(Buffer.from(image?.content ?? []).equals(Buffer.from(png))).toBe(true);
    const cleaned = await getArtifact(db, noteId);
    const text = Buffer.from(cleaned?.content ?? []).toString('utf8');
    expect(text).toBe('token [redacted] inside');
    expect(Number(cleaned?.sizeBytes)).toBe(Buffer.byteLength(text));
    expect(stored.artifacts?.[1]?.sizeBytes).toBe(Buffer.byteLength(text));
    expect(observationOf((await ledger.steps(run.id))[1])?.['artifacts']).toEqual([
      { artifactId: imageId, kind: 'image', mediaType: 'image/png', sizeBytes: 7 },
      { artifactId: noteId, kind: 'resource', mediaType: 'text/plain', sizeBytes: text.length },
    ]);
  });

  it('writes neither the observation nor its artifacts when the lease was lost', async () => {
    const { run, lease } = await leasedRun();
    const callStep = await ledger.recordToolCall(lease, call('c1', 'lookup'), {
      class: 'query',
      replay: 'replayable',
    });
    await db.query(`update runs set lease_expires_at = now() - interval '1 second' where id = $1`, [
      run.id,
    ]);
    const stolen = await claimRunnable(db, 'other-owner', 60_000);
    expect(stolen?.id).toBe(run.id);
    const id = randomUUID();
    await expect(
      ledger.recordObservation(
        lease,
        callStep,
        observation({
          kind: 'result',
          text: 'x',
          artifacts: [
            { artifactId: artifactId(id), kind: 'image', mediaType: 'image/png', sizeBytes: 1 },
          ],
        }),
        'completed',
        [{ id, kind: 'image', mediaType: 'image/png', content: new Uint8Array([1]) }],
      ),
    ).rejects.toMatchObject({ code: LeaseLostError.code });
    expect(await getArtifact(db, id)).toBeUndefined();
    await ledger.finish(
      { runId: run.id, owner: 'other-owner', epoch: stolen?.leaseEpoch ?? 0 },
      'succeeded',
      null,
    );
  });

  it('fences every write by the lease: a worker that lost its run cannot write', async () => {
    const { run, lease } = await leasedRun();
    await db.query(`update runs set lease_expires_at = now() - interval '1 second' where id = $1`, [
      run.id,
    ]);
    const stolen = await claimRunnable(db, 'other-owner', 60_000);
    expect(stolen?.id).toBe(run.id);
    try {
      await ledger.recordToolCall(lease, call('c1', 'post'), {
        class: 'effect',
        replay: 'effectful',
      });
      throw new Error('expected the fence to hold');
    } catch (error) {
      expect(hasCode(error, LeaseLostError.code)).toBe(true);
    }
    expect((await ledger.run(run.id))?.committedAt).toBeNull();
    await ledger.finish(
      { runId: run.id, owner: 'other-owner', epoch: stolen?.leaseEpoch ?? 0 },
      'succeeded',
      null,
    );
  });

  it('refuses to raise a budget mid-run', async () => {
    const { run } = await leasedRun({ maxToolCalls: 2 });
    await expect(
      db.query(`update runs set budget = '{"maxToolCalls": 99}' where id = $1`, [run.id]),
    ).rejects.toThrow(/budget cannot change/);
  });

  it('runs a script to the end: the effect stamped before any call runs, then every end in order', async () => {
    const run = await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: {},
      checkpoint: scriptCheckpoint([
        call('s1', 'lookup'),
        call('s2', 'post'),
        call('s3', 'nope'),
        call('s4', 'lookup', '{"x":1}'),
      ]),
    });
    const worker = new Worker({ ledger, drivers: [driver], owner: 'w1' });
    while ((await ledger.run(run.id))?.status !== 'succeeded')
      expect(await worker.runOnce()).toBe(true);
    const steps = await ledger.steps(run.id);
    expect(steps.map((s) => `${s.seq}:${s.kind}:${callIdOf(s)}:${s.status}`)).toEqual([
      // The round's first commit: the write-ahead stamp of its one effect.
      '1:tool_call:s2:completed',
      // Its second: the query recorded after it ran, each observation, the refusals.
      '2:tool_call:s1:completed',
      '3:observation:s1:completed',
      '4:observation:s2:completed',
      '5:tool_call:s3:refused',
      '6:observation:s3:completed',
      '7:tool_call:s4:refused',
      '8:observation:s4:completed',
    ]);
    expect(observationOf(steps[5])?.['kind']).toBe('unknown_tool');
    expect(observationOf(steps[7])?.['kind']).toBe('invalid_input');
    expect((await ledger.run(run.id))?.usage).toMatchObject({ toolCalls: 4 });
  });

  it('ends a run as budget_exhausted with a reason naming the budget', async () => {
    const run = await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: { maxToolCalls: 2 },
      checkpoint: scriptCheckpoint([
        call('b1', 'lookup'),
        call('b2', 'lookup'),
        call('b3', 'post'),
      ]),
    });
    const worker = new Worker({ ledger, drivers: [driver], owner: 'w2' });
    await worker.runOnce();
    const finished = await ledger.run(run.id);
    expect(finished?.status).toBe('budget_exhausted');
    expect(finished?.reason).toContain('max tool calls (2)');
    expect((await ledger.steps(run.id)).filter((s) => s.kind === 'tool_call')).toHaveLength(2);
  });

  it('ends a run whose wall clock ran out', async () => {
    const run = await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: { wallClockMs: 1_000 },
      checkpoint: scriptCheckpoint([call('t1', 'lookup')]),
    });
    // The budget reads this clock: a minute after the run was created (by the database's time),
    // so its second of wall clock is long gone without the test waiting for it.
    const clock = manualClock(new Date(run.createdAt.getTime() + 60_000));
    const late = scriptDriver({ registryFor: () => registry, runtimeFor, clock });
    await new Worker({ ledger, drivers: [late], owner: 'w3' }).runOnce();
    const finished = await ledger.run(run.id);
    expect(finished?.status).toBe('budget_exhausted');
    expect(finished?.reason).toContain('wall clock (1 s)');
    expect(executed.filter((e) => e === 'lookup:t1')).toEqual([]);
  });

  it('runs a call while the wall clock lasts, by the same clock', async () => {
    const run = await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: { wallClockMs: 1_000 },
      checkpoint: scriptCheckpoint([call('t2', 'lookup')]),
    });
    const clock = manualClock(run.createdAt);
    const onTime = scriptDriver({ registryFor: () => registry, runtimeFor, clock });
    await new Worker({ ledger, drivers: [onTime], owner: 'w4' }).runOnce();
    expect((await ledger.run(run.id))?.status).toBe('succeeded');
    expect(executed).toContain('lookup:t2');
  });

  it('resumes truthfully: no completed step repeated, a replayable call re-run, a committed effect reported unknown', async () => {
    executed.length = 0;
    const { run, lease } = await leasedRun();
    await db.query(`update runs set checkpoint = $2::jsonb where id = $1`, [
      run.id,
      JSON.stringify(
        scriptCheckpoint([
          call('r1', 'lookup'),
          call('r2', 'post'),
          call('r3', 'lookup'),
          call('r4', 'post'),
        ]),
      ),
    ]);
    // The first holder completed r1, committed r2 (and may have posted), started r3, then died.
    const s1 = await ledger.recordToolCall(lease, call('r1', 'lookup'), {
      class: 'query',
      replay: 'replayable',
    });
    await ledger.recordObservation(lease, s1, observation({ kind: 'result', text: 'found' }));
    await ledger.recordToolCall(lease, call('r2', 'post'), {
      class: 'effect',
      replay: 'effectful',
    });
    await ledger.recordToolCall(lease, call('r3', 'lookup'), {
      class: 'query',
      replay: 'replayable',
    });
    await db.query(`update runs set lease_expires_at = now() - interval '1 second' where id = $1`, [
      run.id,
    ]);

    await new Worker({ ledger, drivers: [driver], owner: 'resumer' }).runOnce();
    expect(executed).toEqual(['lookup:r3', 'post:r4']);
    const finished = await ledger.run(run.id);
    expect(finished?.status).toBe('succeeded');
    expect(finished?.reason).toContain('outcome unknown for post (r2)');
    const steps = await ledger.steps(run.id);
    const r2 = steps.filter((s) => callIdOf(s) === 'r2');
    expect(r2.map((s) => s.status)).toEqual(['unknown', 'completed']);
    expect(observationOf(r2[1])?.['kind']).toBe('unknown_outcome');
    expect(steps.filter((s) => callIdOf(s) === 'r1')).toHaveLength(2);
    expect(steps.filter((s) => callIdOf(s) === 'r3').map((s) => s.kind)).toEqual([
      'tool_call',
      'observation',
    ]);
  });

  it('records nothing for a call the run was stopped in: the next holder settles it as unknown', async () => {
    executed.length = 0;
    const run = await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: {},
      checkpoint: scriptCheckpoint([call('s1', 'lookup'), call('s2', 'stall')]),
    });
    // A holder whose database stops answering its heartbeat lets go of the run in mid-call.
    class UnrenewableLedger extends RunLedger {
      override renew(): Promise<boolean> {
        return Promise.reject(new Error('the database connection was lost'));
      }
    }
    const holder = new Worker({
      ledger: new UnrenewableLedger(runStore(db)),
      drivers: [driver],
      owner: 'cut-holder',
      leaseMs: 900,
    });
    expect(await holder.runOnce()).toBe(true);
    expect(executed).toEqual(['lookup:s1', 'stall:s2']);
    const cut = await ledger.steps(run.id);
    // The aborted handler's rejection is the stop's, not the world's: no observation of it.
    expect(cut.filter((s) => callIdOf(s) === 's2').map((s) => s.kind)).toEqual(['tool_call']);
    const released = await ledger.run(run.id);
    expect(released?.status).toBe('running');

    await new Worker({ ledger, drivers: [driver], owner: 'next-holder' }).runOnce();
    const finished = await ledger.run(run.id);
    expect(finished?.status).toBe('succeeded');
    const s2 = (await ledger.steps(run.id)).filter((s) => callIdOf(s) === 's2');
    expect(s2.map((s) => s.status)).toEqual(['unknown', 'completed']);
    expect(observationOf(s2[1])?.['kind']).toBe('unknown_outcome');
    expect(executed).toEqual(['lookup:s1', 'stall:s2']);
  });
});
