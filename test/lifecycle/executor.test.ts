import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { HookContext, HookOutcome } from '../../src/tool/hook.ts';
import type { Db } from '../../src/store/db.ts';
import { lifecycleStore } from '../../src/store/lifecycle.ts';
import { testDatabases } from '../support/db.ts';
import { catalogPackage, linearInstall, testLifecycle } from '../support/lifecycle.ts';
import { startLinearFake, type LinearFake } from '../support/linear-fake.ts';
import { makeAgent } from '../support/run.ts';
import { RunLedger } from '../../src/run/ledger.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import { runStore } from '../../src/store/run-store.ts';
import { expectSerialized } from './serialized.ts';

const KEY = 'lin_api_lifecycleTestKey0123456789';
const LINEAR = 'mesh.linear';

describe.each(testDatabases())('the lifecycle executor on $name', (database) => {
  let db: Db;
  let dispose: () => Promise<void> = () => Promise.resolve();
  let linear: LinearFake;
  let agentId: string;

  beforeAll(async () => {
    const opened = await database.open();
    db = opened.db;
    dispose = () => opened.dispose();
    linear = await startLinearFake();
    linear.keys.add(KEY);
  });
  afterAll(async () => {
    await linear?.close();
    await dispose();
  });
  beforeEach(async () => {
    linear.reset();
    agentId = await makeAgent(db);
  });

  const lifecycle = () => testLifecycle(db, { [LINEAR]: linearInstall(linear.url, KEY) });
  const request = (
    action: 'enable' | 'disable' | 'health' | 'rotate' | 'upgrade',
    actor = 'operator:ada',
  ) => lifecycle().request({ agentId, packageId: LINEAR, action, actor });

  it('enables through the hook: one webhook, an attributed transition pinned to the versions in force', async () => {
    const done = await request('enable');
    expect(done.install.state).toBe('enabled');
    expect(linear.webhooks.size).toBe(1);
    const [hook] = [...linear.webhooks.values()];
    expect(hook).toMatchObject({ url: 'http://127.0.0.1:9/hooks/linear', enabled: true });
    expect(done.install.hookState).toEqual({ webhook_id: hook?.id });
    const pkg = catalogPackage(LINEAR);
    expect(done.transition).toMatchObject({
      seq: 1,
      action: 'enable',
      requestedBy: 'operator:ada',
      fromState: 'disabled',
      toState: 'enabled',
      outcome: 'succeeded',
      attempts: 1,
      packageVersion: pkg?.version,
      packageDigest: pkg?.digest,
      secretVersion: 'linear_api_key@1',
    });
    expect(done.transition?.configVersion).toMatch(/^[0-9a-f]{64}$/);
    expect(done.install).toMatchObject({
      packageVersion: pkg?.version,
      packageDigest: pkg?.digest,
    });
    // The webhook's id is the transition's key as a UUID: another attempt would find it.
    expect(hook?.id).toMatch(/^[0-9a-f-]{36}$/);

    // Enabling what is enabled changes nothing and records nothing.
    const again = await request('enable');
    expect(again.transition).toBeUndefined();
    expect(linear.webhooks.size).toBe(1);
    expect(await lifecycleStore(db).history(done.install.id)).toHaveLength(1);
  });

  it('tries again after a 5xx, and finds what an attempt whose answer was lost made', async () => {
    linear.failures.push('internal');
    const retried = await request('enable');
    expect(retried.transition).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(linear.webhooks.size).toBe(1);

    const other = await makeAgent(db);
    linear.failures.push('lost');
    const lost = await lifecycle().request({
      agentId: other,
      packageId: LINEAR,
      action: 'enable',
      actor: 'operator:ada',
    });
    expect(lost.transition).toMatchObject({ outcome: 'succeeded', attempts: 2 });
    expect(linear.webhooks.size).toBe(2);
    // Asked to create once: the second attempt found the webhook by its id instead.
    const id = lost.install.hookState['webhook_id'] as string;
    expect(linear.createRequests.get(id)).toBe(1);
  });

  it('parks a failed teardown in error with a compensation task; retrying it removes the webhook', async () => {
    await request('enable');
    linear.failures.push('forbidden');
    const failed = await request('disable');
    expect(failed.install.state).toBe('error');
    expect(failed.transition).toMatchObject({ action: 'disable', outcome: 'failed', attempts: 1 });
    expect(failed.transition?.error).toContain('forbidden');
    expect(linear.webhooks.size).toBe(1);
    const store = lifecycleStore(db);
    const [task] = await store.compensations(failed.install.id);
    expect(task).toMatchObject({ action: 'disable', state: 'open' });

    const retried = await lifecycle().compensate(agentId, LINEAR, 'retry', 'operator:bo');
    expect(retried.install.state).toBe('disabled');
    expect(retried.install.hookState).toEqual({});
    expect(linear.webhooks.size).toBe(0);
    expect(await store.compensations(failed.install.id)).toMatchObject([
      { state: 'retried', resolvedBy: 'operator:bo' },
    ]);
    expect((await store.history(failed.install.id)).map((t) => [t.action, t.outcome])).toEqual([
      ['enable', 'succeeded'],
      ['disable', 'failed'],
      ['disable', 'succeeded'],
    ]);
    await expect(lifecycle().compensate(agentId, LINEAR, 'retry', 'operator:bo')).rejects.toThrow(
      /no open compensation task/,
    );
  });

  it('abandons a task: the install is disabled and the record says who accepted what was left', async () => {
    await request('enable');
    linear.failures.push('forbidden');
    await request('disable');
    const abandoned = await lifecycle().compensate(agentId, LINEAR, 'abandon', 'operator:bo');
    expect(abandoned.install.state).toBe('disabled');
    expect(abandoned.transition).toMatchObject({
      action: 'abandon',
      requestedBy: 'operator:bo',
      fromState: 'error',
      toState: 'disabled',
      outcome: 'succeeded',
    });
    // Left in Linear, as the operator accepted.
    expect(linear.webhooks.size).toBe(1);
  });

  it('gives up after its attempts, and a health check finds a webhook removed behind its back', async () => {
    linear.failures.push('internal', 'internal', 'internal', 'internal');
    const spent = await request('enable');
    expect(spent.install.state).toBe('error');
    expect(spent.transition).toMatchObject({ outcome: 'failed', attempts: 4 });
    expect(spent.transition?.error).toContain('gave up after 4 attempts');

    const retried = await lifecycle().compensate(agentId, LINEAR, 'retry', 'operator:ada');
    expect(retried.install.state).toBe('enabled');
    linear.webhooks.clear();
    const checked = await request('health');
    expect(checked.install.state).toBe('error');
    expect(checked.transition?.error).toBe('the webhook Mesh registered is gone from Linear');
    // Its compensation re-enables: a new webhook.
    const healed = await lifecycle().compensate(agentId, LINEAR, 'retry', 'operator:ada');
    expect(healed.install.state).toBe('enabled');
    expect(linear.webhooks.size).toBe(1);
    expect((await request('health')).transition).toMatchObject({ outcome: 'succeeded' });
  });

  it('refuses to check or rotate what is not enabled, and a missing secret is terminal, unquoted', async () => {
    await expect(request('health')).rejects.toMatchObject({ code: 'install_not_enabled' });
    await expect(request('rotate')).rejects.toMatchObject({ code: 'install_not_enabled' });
    const keyless = testLifecycle(db, {
      [LINEAR]: { ...linearInstall(linear.url, KEY), secrets: {} },
    });
    const done = await keyless.request({
      agentId,
      packageId: LINEAR,
      action: 'enable',
      actor: 'operator:ada',
    });
    expect(done.install.state).toBe('error');
    expect(done.transition).toMatchObject({ attempts: 1, secretVersion: 'none' });
    expect(done.transition?.error).toBe('mesh.linear has no linear_api_key captured');
    await expect(
      lifecycle().request({ agentId, packageId: 'mesh.nothing', action: 'enable', actor: 'x' }),
    ).rejects.toMatchObject({ code: 'package_not_found' });
  });

  it('rotates only to a key the vendor accepts', async () => {
    await request('enable');
    const rotated = await request('rotate');
    expect(rotated.transition).toMatchObject({ action: 'rotate', outcome: 'succeeded' });
    const refused = testLifecycle(db, {
      [LINEAR]: {
        ...linearInstall(linear.url, KEY),
        secrets: { linear_api_key: { value: 'lin_api_notKnownToLinear000000000000', version: 2 } },
      },
    });
    const bad = await refused.request({
      agentId,
      packageId: LINEAR,
      action: 'rotate',
      actor: 'operator:ada',
    });
    expect(bad.install.state).toBe('error');
    expect(bad.transition).toMatchObject({ secretVersion: 'linear_api_key@2', outcome: 'failed' });
    expect(bad.transition?.error).toContain('refused');
    expect(JSON.stringify(bad)).not.toContain('lin_api_notKnownToLinear');
    // Its task, once a working key is back, enables again (a re-check cannot run from error).
    const healed = await lifecycle().compensate(agentId, LINEAR, 'retry', 'operator:ada');
    expect(healed.install.state).toBe('enabled');
    expect(healed.transition).toMatchObject({ action: 'enable', fromState: 'error' });
  });

  it('moves a package without hooks through the same records: on by default, an opt-out is a transition', async () => {
    const memory = testLifecycle(db, {});
    const ask = (action: 'enable' | 'disable') =>
      memory.request({ agentId, packageId: 'mesh.memory', action, actor: 'operator:ada' });
    // Never installed: on by default, so enabling has nothing to do.
    expect((await ask('enable')).transition).toBeUndefined();
    const off = await ask('disable');
    expect(off.install.state).toBe('disabled');
    expect(off.transition).toMatchObject({
      fromState: 'enabled',
      outcome: 'succeeded',
      attempts: 1,
    });
    expect((await ask('enable')).install.state).toBe('enabled');
  });

  it("drains a disabled package's calls in flight, or cancels the runs holding them as it declares", async () => {
    await request('enable');
    const ledger = new RunLedger(runStore(db));
    /** A run of the agent holding a mesh.linear call that has not ended. */
    const calling = async () => {
      await ledger.createRun({
        agentId,
        kind: 'script',
        provenance: { kind: 'operator', operator: 'test' },
        budget: { maxToolCalls: 10 },
        checkpoint: scriptCheckpoint([]),
      });
      const run = await ledger.claim(`worker-${agentId}`, 60_000);
      if (!run) throw new Error('nothing to claim');
      const lease = { runId: run.id, owner: `worker-${agentId}`, epoch: run.leaseEpoch };
      await runStore(db).appendStep(lease, {
        kind: 'tool_call',
        status: 'started',
        toolName: 'create_linear_issue',
        callId: 'call_1',
        effect: { class: 'effect', replay: 'effectful' },
        package: { id: LINEAR, version: '1.0.0', digest: 'sha256:test' },
        arguments: '{}',
        committed: true,
      });
      return lease;
    };
    const store = lifecycleStore(db);

    // Drained: the call ends while the disable waits; its run keeps its lease.
    const draining = await calling();
    const drained = await testLifecycle(
      db,
      { [LINEAR]: linearInstall(linear.url, KEY) },
      {
        sleep: async () => {
          await db.query(`update run_steps set status = 'completed' where run_id = $1`, [
            draining.runId,
          ]);
        },
      },
    ).request({ agentId, packageId: LINEAR, action: 'disable', actor: 'operator:ada' });
    expect(drained.transition).toMatchObject({
      outcome: 'succeeded',
      detail: 'drained 1 call(s) in flight',
    });
    expect(await ledger.renew(draining, 60_000)).toBe(true);
    expect(await store.inFlightCalls(agentId, LINEAR)).toBe(0);

    // A call that outlasts the drain: its run is cancelled (its holder loses the lease).
    await request('enable');
    const stuck = await calling();
    const cut = await testLifecycle(
      db,
      { [LINEAR]: linearInstall(linear.url, KEY) },
      { drainMs: 0 },
    ).request({ agentId, packageId: LINEAR, action: 'disable', actor: 'operator:ada' });
    expect(cut.transition?.detail).toBe(
      'drained for 0 s, then cancelled 1 run(s) still calling the package',
    );
    expect(await ledger.renew(stuck, 60_000)).toBe(false);

    // A package that declares `in_flight = "cancel"` does not wait.
    await request('enable');
    const waiting: string[] = [];
    const held = await calling();
    const cancelled = await testLifecycle(
      db,
      { [LINEAR]: linearInstall(linear.url, KEY) },
      {
        packageOf: (id) => ({ ...catalogPackage(id)!, inFlight: 'cancel' }),
        sleep: async () => void waiting.push('slept'),
      },
    ).request({ agentId, packageId: LINEAR, action: 'disable', actor: 'operator:ada' });
    expect(cancelled.transition?.detail).toBe('cancelled 1 run(s) calling the package');
    expect(waiting).toEqual([]);
    expect(await ledger.renew(held, 60_000)).toBe(false);
    // The cancelled run is claimable again: it resumes elsewhere, without the package.
    const resumed = await ledger.claim('worker-next', 60_000);
    expect([stuck.runId, held.runId]).toContain(resumed?.id);
  });

  it('upgrades an install pinned to an older package as an explicit transition', async () => {
    const store = lifecycleStore(db);
    const enabled = await request('enable');
    expect(
      await lifecycle().request({ agentId, packageId: LINEAR, action: 'upgrade', actor: 'x' }),
    ).not.toHaveProperty('transition');
    // As if Mesh had run an older mesh.linear when it was enabled.
    await db.query(
      `update package_installs set package_version = '0.9.0', package_digest = $2 where id = $1::uuid`,
      [enabled.install.id, `sha256:${'0'.repeat(64)}`],
    );
    expect(await lifecycle().upgradeDrifted('operator:test')).toBeGreaterThanOrEqual(1);
    const pkg = catalogPackage(LINEAR);
    const install = await store.findInstall(agentId, LINEAR);
    expect(install).toMatchObject({
      state: 'enabled',
      packageVersion: pkg?.version,
      packageDigest: pkg?.digest,
    });
    const [, upgrade] = await store.history(enabled.install.id);
    expect(upgrade).toMatchObject({
      action: 'upgrade',
      requestedBy: 'operator:test',
      fromState: 'enabled',
      toState: 'enabled',
      outcome: 'succeeded',
      packageVersion: pkg?.version,
    });
    expect(upgrade?.detail).toMatch(/^upgraded from 0\.9\.0 \(sha256:0{12}…\) to 1\.0\.0 \(/);
    // on_enable ran again and found its webhook: still one.
    expect(linear.webhooks.size).toBe(1);
    expect(await lifecycle().upgradeDrifted('operator:test')).toBe(0);
    await request('disable');
    await expect(request('upgrade')).rejects.toMatchObject({ code: 'install_not_enabled' });
  });

  it('rotates to a new key only once on_secret_capture accepted it; a refused one leaves the old in use', async () => {
    await request('enable');
    const install = linearInstall(linear.url, KEY);
    const stored: string[] = [];
    const rotating = testLifecycle(
      db,
      { [LINEAR]: install },
      {
        captureSecret: async (_agent, _pkg, kind, value) => {
          stored.push(value);
          install.secrets[kind] = { value, version: (install.secrets[kind]?.version ?? 0) + 1 };
        },
      },
    );
    const rotate = (value: string) =>
      rotating.request({
        agentId,
        packageId: LINEAR,
        action: 'rotate',
        actor: 'operator:ada',
        candidate: { kind: 'linear_api_key', value },
      });
    const NEXT = 'lin_api_rotatedKeyAcceptedByLinear000';
    linear.keys.add(NEXT);
    const accepted = await rotate(NEXT);
    expect(accepted.install.state).toBe('enabled');
    expect(accepted.transition).toMatchObject({
      action: 'rotate',
      outcome: 'succeeded',
      secretVersion: 'linear_api_key@1',
      detail: 'a new secret, stored only once on_secret_capture accepts it',
    });
    expect(stored).toEqual([NEXT]);
    // The hook tried the new key itself, before it was stored.
    expect(linear.received.at(-1)).toMatchObject({ field: 'viewer', authorized: true });

    const refused = await rotate('lin_api_unknownToLinear0000000000000');
    expect(refused.install.state).toBe('enabled');
    expect(refused.transition).toMatchObject({
      outcome: 'failed',
      secretVersion: 'linear_api_key@2',
    });
    expect(refused.transition?.error).toContain('refused');
    expect(stored).toEqual([NEXT]);
    expect(await lifecycleStore(db).compensations(refused.install.id)).toEqual([]);
    expect(JSON.stringify(refused)).not.toContain('lin_api_unknownToLinear');
  });

  it('settles a rotation a stopped process cut: its new secret was never kept, the old stays', async () => {
    await request('enable');
    const pkg = catalogPackage(LINEAR)!;
    const hook = entered();
    const stop = new AbortController();
    const cut = testLifecycle(
      db,
      { [LINEAR]: linearInstall(linear.url, KEY) },
      {
        signal: stop.signal,
        packageOf: () => ({
          ...pkg,
          hooks: {
            ...pkg.hooks,
            on_secret_capture: (ctx: HookContext) => {
              hook.enter();
              return new Promise<HookOutcome>((_, reject) =>
                ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)),
              );
            },
          },
        }),
        captureSecret: async () => undefined,
      },
    ).request({
      agentId,
      packageId: LINEAR,
      action: 'rotate',
      actor: 'operator:ada',
      candidate: { kind: 'linear_api_key', value: 'lin_api_neverKept00000000000000000' },
    });
    await hook.reached;
    stop.abort(new Error('stopping'));
    await expect(cut).rejects.toThrow('stopping');
    expect(await lifecycle().resumeUnfinished()).toBe(1);
    const store = lifecycleStore(db);
    const install = await store.findInstall(agentId, LINEAR);
    expect(install?.state).toBe('enabled');
    const history = await store.history(install?.id ?? '');
    expect(history.at(-1)).toMatchObject({
      action: 'rotate',
      outcome: 'failed',
      error: 'the process stopped before the new secret was kept; capture it again',
    });
    expect(await store.compensations(install?.id ?? '')).toEqual([]);
  });

  it('serializes concurrent requests on one install into one history', async () => {
    const actions = ['enable', 'disable', 'enable', 'health', 'disable', 'enable'] as const;
    const results = await Promise.all(
      actions.map((action, i) => request(action, `operator:${i}`).catch((e: unknown) => e)),
    );
    expect(results.length).toBe(actions.length);
    const store = lifecycleStore(db);
    const install = await store.findInstall(agentId, LINEAR);
    const history = await store.history(install?.id ?? '');
    expectSerialized(history);
    expect(linear.webhooks.size).toBe(install?.state === 'enabled' ? 1 : 0);
  });

  it('resumes a transition a stopped process left running, with the same key', async () => {
    const hook = entered();
    const keys: string[] = [];
    const pkg = catalogPackage(LINEAR)!;
    // The first process stops while its hook is in flight (the hook answers only the stop).
    const hanging = {
      ...pkg,
      hooks: {
        on_enable: (ctx: HookContext) => {
          hook.enter();
          keys.push(ctx.idempotencyKey.key);
          return new Promise<HookOutcome>((_, reject) =>
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)),
          );
        },
      },
    };
    const stop = new AbortController();
    const first = testLifecycle(db, {}, { packageOf: () => hanging, signal: stop.signal });
    const cut = first.request({ agentId, packageId: LINEAR, action: 'enable', actor: 'op' });
    await hook.reached;
    stop.abort(new Error('stopping'));
    await expect(cut).rejects.toThrow('stopping');
    const store = lifecycleStore(db);
    const install = await store.findInstall(agentId, LINEAR);
    expect(install?.state).toBe('enabling');
    expect(await store.unfinished(install?.id ?? '')).toMatchObject({ attempts: 1 });

    const second = testLifecycle(
      db,
      {},
      {
        packageOf: () => ({
          ...pkg,
          hooks: {
            on_enable: async (ctx: HookContext): Promise<HookOutcome> => {
              keys.push(ctx.idempotencyKey.key);
              return { kind: 'success', state: { resumed: true } };
            },
          },
        }),
      },
    );
    expect(await second.resumeUnfinished()).toBe(1);
    expect(await store.findInstall(agentId, LINEAR)).toMatchObject({
      state: 'enabled',
      hookState: { resumed: true },
    });
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]);
    expect(await store.history(install?.id ?? '')).toMatchObject([
      { seq: 1, requestedBy: 'op', outcome: 'succeeded', attempts: 2 },
    ]);
    expect(await second.resumeUnfinished()).toBe(0);
  });
});

/** A point a hook reaches: `reached` resolves the first time `enter` is called. */
function entered(): { enter: () => void; reached: Promise<void> } {
  let enter!: () => void;
  const reached = new Promise<void>((resolve) => (enter = resolve));
  return { enter, reached };
}
