import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { RunLedger } from '../../src/run/ledger.ts';
import { runStore } from '../../src/store/run-store.ts';
import { scriptCheckpoint, scriptDriver } from '../../src/run/script-driver.ts';
import { Worker } from '../../src/run/worker.ts';
import type { RunDriver } from '../../src/run/driver.ts';
import type { Db } from '../../src/store/db.ts';
import { claimRunnable } from '../../src/store/runs.ts';
import { createRegistry } from '../../src/tool/registry.ts';
import { testDatabases } from '../support/db.ts';
import { makeAgent, runtimeFor } from '../support/run.ts';
import { testDefinition } from '../support/tool.ts';

describe.each(testDatabases())('workers on $name', (database) => {
  let db: Db;
  let url: string | undefined;
  let dispose: () => Promise<void>;
  let ledger: RunLedger;
  let agentId: string;

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    url = opened.url;
    dispose = () => opened.dispose();
    ledger = new RunLedger(runStore(db));
    agentId = await makeAgent(db);
  });
  afterAll(() => dispose());

  const script = (n: number, prefix: string) =>
    scriptCheckpoint(
      Array.from({ length: n }, (_, i) => ({
        id: `${prefix}${i}`,
        name: 'lookup',
        arguments: '{}',
      })),
    );

  it('never hand the same run to two claimers at once (FOR UPDATE SKIP LOCKED)', async () => {
    await db.query(`update runs set status = 'failed' where status in ('queued', 'running')`);
    const ids = new Set<string>();
    for (let i = 0; i < 12; i++) {
      const run = await ledger.createRun({
        agentId,
        kind: 'script',
        provenance: { kind: 'operator', operator: 'test' },
        budget: {},
        checkpoint: script(1, `claim${i}-`),
      });
      ids.add(run.id);
    }
    const claims = await Promise.all(
      Array.from({ length: 16 }, (_, i) => claimRunnable(db, `claimer-${i}`, 60_000)),
    );
    const claimed = claims.filter((c) => c !== undefined).map((c) => c.id);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.length).toBe(12);
    expect(new Set(claimed)).toEqual(ids);
  });

  /** A driver that works for `ms` unless its signal aborts first, reporting which happened. */
  const patientDriver = (
    ms: number,
    onEnd: (how: 'finished' | 'aborted', runId: string) => Promise<void>,
    onStart?: () => void,
  ): RunDriver => ({
    kind: 'patient',
    async drive({ run, signal }) {
      onStart?.();
      const how = await new Promise<'finished' | 'aborted'>((resolve) => {
        const timer = setTimeout(() => resolve('finished'), ms);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve('aborted');
        });
      });
      await onEnd(how, run.id);
      return how === 'finished'
        ? { status: 'succeeded', reason: null }
        : { status: 'interrupted', reason: null };
    },
  });

  const patientRun = () =>
    ledger.createRun({
      agentId,
      kind: 'patient',
      provenance: { kind: 'operator', operator: 'test' },
      budget: {},
      checkpoint: script(0, 'patient-'),
    });

  it('a live worker heartbeats its lease: a worker beside it never takes the run', async () => {
    await db.query(`update runs set status = 'failed' where status in ('queued', 'running')`);
    const ends: string[] = [];
    let started!: () => void;
    const working = new Promise<void>((resolve) => (started = resolve));
    const run = await patientRun();
    // Leases of 2 s (renewed every 666 ms, given up after 1.33 s unrenewed): the holder works for
    // two and a half, so only its renewals keep the rival out. Shorter leases were lost on a
    // two-core machine with four busy loops beside the suite: a renewal waited over 400 ms.
    const holder = new Worker({
      ledger,
      drivers: [patientDriver(5_000, async (how) => void ends.push(how), started)],
      leaseMs: 2_000,
      pollMs: 10,
    });
    const rival = new Worker({
      ledger,
      drivers: [patientDriver(0, async (how) => void ends.push(`rival ${how}`))],
      leaseMs: 2_000,
      pollMs: 10,
    });
    const holding = holder.runOnce();
    await working;
    rival.start();
    expect(await holding).toBe(true);
    await rival.stop();
    expect(ends).toEqual(['finished']);
    const { rows } = await db.query<{ status: string; epoch: number }>(
      'select status, lease_epoch as epoch from runs where id = $1',
      [run.id],
    );
    expect(rows[0]).toEqual({ status: 'succeeded', epoch: 1 });
  });

  it('a worker that cannot renew its lease stops work on the run before the lease expires', async () => {
    await db.query(`update runs set status = 'failed' where status in ('queued', 'running')`);
    class UnrenewableLedger extends RunLedger {
      override renew(): Promise<boolean> {
        return Promise.reject(new Error('the database connection was lost'));
      }
    }
    const ends: { how: string; stillHeld: boolean }[] = [];
    const driver = patientDriver(6_000, async (how, runId) => {
      const { rows } = await db.query<{ held: boolean }>(
        'select lease_expires_at > now() as held from runs where id = $1',
        [runId],
      );
      ends.push({ how, stillHeld: rows[0]?.held ?? false });
    });
    const worker = new Worker({
      ledger: new UnrenewableLedger(runStore(db)),
      drivers: [driver],
      leaseMs: 1_500,
    });
    await patientRun();
    expect(await worker.runOnce()).toBe(true);
    // It let go while the lease it could not renew was still its own: no one else held it yet.
    expect(ends).toEqual([{ how: 'aborted', stillHeld: true }]);
  });

  it('gives no lease back while a look for work it sent is still unanswered', async () => {
    await db.query(`update runs set status = 'failed' where status in ('queued', 'running')`);
    const events: string[] = [];
    let stopCalled!: () => void;
    const stopping = new Promise<void>((resolve) => (stopCalled = resolve));
    let claims = 0;
    /** Its second look for work is answered only after stop() was called. */
    class SlowLookLedger extends RunLedger {
      override async claim(owner: string, leaseMs: number) {
        const n = ++claims;
        if (n === 2) await stopping;
        events.push(`look ${n}`);
        const run = await super.claim(owner, leaseMs);
        events.push(`answer ${n}: ${run ? 'a run' : 'none'}`);
        return run;
      }
      override async release(lease: Parameters<RunLedger['release']>[0]) {
        events.push('release');
        return super.release(lease);
      }
    }
    let started!: () => void;
    const working = new Promise<void>((resolve) => (started = resolve));
    const run = await patientRun();
    const holder = new Worker({
      ledger: new SlowLookLedger(runStore(db)),
      drivers: [patientDriver(3_600_000, async () => undefined, started)],
      pollMs: 10,
    });
    holder.start();
    await working;
    stopCalled();
    await holder.stop();
    // The look already under way was answered (nothing runnable: the run was still held) before
    // the run's lease was given back, so the run was let go of once, by one stop.
    expect(events).toEqual(['look 1', 'answer 1: a run', 'look 2', 'answer 2: none', 'release']);
    expect((await ledger.run(run.id))?.interruptions).toBe(0);
  });

  it('a run whose holders stopped or died more often than allowed ends failed, never resumed again', async () => {
    await db.query(`update runs set status = 'failed' where status in ('queued', 'running')`);
    const run = await patientRun();
    const starts: number[] = [];
    const lapse = () =>
      db.query(`update runs set lease_expires_at = now() - interval '1 second' where id = $1`, [
        run.id,
      ]);
    const givenUp: string[] = [];
    /** A driver that works until its worker stops; it says when it began, and whether it gave up. */
    const stuck = (started: () => void): RunDriver => ({
      ...patientDriver(3_600_000, async () => undefined, started),
      async giveUp({ run: given }, reason) {
        givenUp.push(`${given.id === run.id ? 'this run' : given.id}: ${reason}`);
      },
    });
    // Two holders are stopped while driving it (each gives its lease back), two die holding it
    // (their leases lapse): four interruptions, one more than the default allows.
    for (let i = 0; i < 4; i++) {
      if (i % 2 === 0) {
        let started!: () => void;
        const working = new Promise<void>((resolve) => (started = resolve));
        const holder = new Worker({ ledger, drivers: [stuck(started)], pollMs: 10 });
        holder.start();
        await working;
        starts.push(i);
        await holder.stop();
      } else {
        // The stopped holder gave its lease back at now(), which a claim in the same clock tick
        // does not count as past.
        await lapse();
        const claimed = await claimRunnable(db, `dead-holder-${i}`, 60_000);
        expect(claimed?.id).toBe(run.id);
        await db.query(
          `update runs set lease_expires_at = now() - interval '1 second' where id = $1`,
          [run.id],
        );
      }
    }
    await lapse();
    const last = new Worker({ ledger, drivers: [stuck(() => starts.push(99))], pollMs: 10 });
    expect(await last.runOnce()).toBe(true);
    expect(starts).toEqual([0, 2]);
    const ended = await ledger.run(run.id);
    expect(ended?.status).toBe('failed');
    expect(ended?.interruptions).toBe(4);
    expect(ended?.reason).toMatch(
      /^not resumed: the process running it died or was stopped 4 times/,
    );
    expect(givenUp).toEqual([`this run: ${ended?.reason ?? ''}`]);
    // Ended: no worker claims it again.
    expect(await claimRunnable(db, 'later', 60_000)).toBeUndefined();
  });

  it('a background worker drives queued runs to the end and stops cleanly', async () => {
    const registry = createRegistry([testDefinition('lookup')]);
    const worker = new Worker({
      ledger,
      drivers: [scriptDriver({ registryFor: () => registry, runtimeFor })],
      pollMs: 10,
      concurrency: 3,
    });
    const runs = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        ledger.createRun({
          agentId,
          kind: 'script',
          provenance: { kind: 'operator', operator: 'test' },
          budget: {},
          checkpoint: script(2, `bg${i}-`),
        }),
      ),
    );
    worker.start();
    await worker.idle();
    await worker.stop();
    for (const r of runs) expect((await ledger.run(r.id))?.status).toBe('succeeded');
  });

  it('idle() resolves only after a look that began after it was called, and wake() brings that look forward', async () => {
    const registry = createRegistry([testDefinition('lookup')]);
    // A poll this long would time the test out: every look here is brought forward by wake().
    const worker = new Worker({
      ledger,
      drivers: [scriptDriver({ registryFor: () => registry, runtimeFor })],
      pollMs: 600_000,
    });
    worker.start();
    // The first look is already under way; idle() waits for one that begins after it.
    const first = worker.idle();
    worker.wake();
    await first;
    const queued = await ledger.createRun({
      agentId,
      kind: 'script',
      provenance: { kind: 'operator', operator: 'test' },
      budget: {},
      checkpoint: script(3, 'late-'),
    });
    const idle = worker.idle();
    worker.wake();
    await idle;
    expect((await ledger.run(queued.id))?.status).toBe('succeeded');
    await worker.stop();
    await worker.idle();
  });

  it.skipIf(database.name !== 'postgres')(
    'a connection dropped mid-run fails that run with a clear reason while the worker serves other runs',
    async () => {
      // The handler holds a query on a pooled connection; the test kills that backend, as a
      // network drop or a server restart would.
      let probeSent!: () => void;
      const probing = new Promise<void>((resolve) => (probeSent = resolve));
      const registry = createRegistry([
        testDefinition('slow_query', {
          execute: async () => {
            const query = db.query("select pg_sleep(60), 'mesh-drop-probe'");
            probeSent();
            await query;
            return { text: 'unreachable' };
          },
        }),
        testDefinition('lookup'),
      ]);
      const logs: string[] = [];
      const worker = new Worker({
        ledger,
        drivers: [scriptDriver({ registryFor: () => registry, runtimeFor })],
        pollMs: 10,
        concurrency: 2,
        log: (line) => logs.push(line),
      });
      const doomed = await ledger.createRun({
        agentId,
        kind: 'script',
        provenance: { kind: 'operator', operator: 'test' },
        budget: {},
        checkpoint: scriptCheckpoint([{ id: 'd1', name: 'slow_query', arguments: '{}' }]),
      });
      worker.start();
      const admin = new pg.Client({ connectionString: url });
      await admin.connect();
      await probing;
      // The probe was sent; the server may take a moment to show it as running. One statement
      // waits for it there (bounded), kills its backend, and fails loudly if it never appears.
      await admin.query(`do $$
        declare killed int := 0;
        begin
          for attempt in 1..6000 loop
            -- A transaction sees one snapshot of the activity view unless it asks for a new one.
            perform pg_stat_clear_snapshot();
            select count(pg_terminate_backend(pid)) into killed from pg_stat_activity
             where datname = current_database() and state = 'active'
               and query like '%mesh-drop-probe%' and pid <> pg_backend_pid();
            exit when killed > 0;
            perform pg_sleep(0.005);
          end loop;
          if killed = 0 then raise exception 'the probe query never ran'; end if;
        end $$`);
      await admin.end();
      const healthy = await ledger.createRun({
        agentId,
        kind: 'script',
        provenance: { kind: 'operator', operator: 'test' },
        budget: {},
        checkpoint: script(2, 'after-drop-'),
      });
      worker.wake();
      await worker.idle();
      await worker.stop();
      const failed = await ledger.run(doomed.id);
      expect(failed?.status).toBe('failed');
      expect(failed?.reason).toContain('tool slow_query failed');
      expect(failed?.reason).toMatch(/terminat/i);
      const steps = await ledger.steps(doomed.id);
      expect(steps.find((s) => s.kind === 'tool_call')?.status).toBe('failed');
      expect((await ledger.run(healthy.id))?.status).toBe('succeeded');
    },
    // Past the statement's own bound (30 s for the probe to show), so its words are what fails.
    60_000,
  );
});
