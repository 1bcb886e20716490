import { randomUUID } from 'node:crypto';
import { hasCode } from '../tool/errors.ts';
import type { HookContext, HookOutcome } from '../tool/hook.ts';
import { idempotencyKey } from '../tool/idempotency.ts';
import { backoffDelayMs, sleep as abortableSleep } from '../tool/retry-policy.ts';
import {
  CANDIDATE_DETAIL,
  DEFAULT_LIFECYCLE_RETRY,
  initialState,
  LifecycleError,
  PLAN,
  retriedAs,
  WHEN_ENABLED,
  type InstallContext,
  type LifecycleOptions,
  type LifecyclePackage,
  type LifecycleRequest,
  type LifecycleResult,
} from './contract.ts';
import type { InstallRecord, InstallState, LifecycleAction, TransitionRecord } from './records.ts';

const STOPPED = new AbortController().signal;

/**
 * The durable lifecycle executor: every enable, disable, health check and rotation of an install
 * is an attributed transition record, pinned to the package and the config and secret versions
 * in force, run under the install's lock (one at a time, across replicas), its hook attempted
 * with one idempotency key until it succeeds, fails for good, or its attempts are spent. A
 * transition a crash cut is resumed (the same hook, the same key) before anything else is done
 * to its install, and a failure parks the install in `error` with a compensation task.
 */
export function createLifecycleExecutor(options: LifecycleOptions) {
  const { store } = options;
  /** Every enabled install pinned to another build of its package than the one running. */
  const drifted = async (): Promise<InstallRecord[]> =>
    (await store.enabledInstalls()).filter((install) => {
      const pkg = options.packageOf(install.packageId);
      return pkg !== undefined && pkg.digest !== install.packageDigest;
    });
  const retry = options.retry ?? DEFAULT_LIFECYCLE_RETRY;
  const deadlineMs = options.attemptDeadlineMs ?? 30_000;
  const sleep = options.sleep ?? abortableSleep;
  const stop = options.signal ?? STOPPED;
  const drainMs = options.drainMs ?? 60_000;
  const drainPollMs = options.drainPollMs ?? 250;

  /**
   * A disable's calls in flight (its tools are already withheld): drained — waited for, up to
   * `drainMs`, then cancelled — or cancelled at once, as the package declares. Says what it did.
   */
  const settleInFlight = async (pkg: LifecyclePackage, install: InstallRecord) => {
    const running = await store.inFlightCalls(install.agentId, install.packageId);
    if (running === 0) return undefined;
    if (pkg.inFlight === 'drain') {
      const until = Date.now() + drainMs;
      let left = running;
      while (left > 0 && Date.now() < until) {
        await sleep(drainPollMs, stop);
        left = await store.inFlightCalls(install.agentId, install.packageId);
      }
      if (left === 0) return `drained ${running} call(s) in flight`;
    }
    const cancelled = await store.cancelInFlight(install.agentId, install.packageId);
    return pkg.inFlight === 'drain'
      ? `drained for ${Math.round(drainMs / 1000)} s, then cancelled ${cancelled} run(s) still calling the package`
      : `cancelled ${cancelled} run(s) calling the package`;
  };

  const packageFor = (packageId: string): LifecyclePackage => {
    const pkg = options.packageOf(packageId);
    if (!pkg) throw new LifecycleError('package_not_found', `no package ${packageId} is installed`);
    return pkg;
  };

  /** One attempt of a hook, its failures (a throw, the deadline) made outcomes. */
  const attemptHook = async (
    pkg: LifecyclePackage,
    transition: TransitionRecord,
    install: InstallRecord,
    context: InstallContext,
    candidate: LifecycleRequest['candidate'],
  ): Promise<HookOutcome> => {
    const name = PLAN[transition.action as Exclude<LifecycleAction, 'abandon'>].hook;
    const hook = pkg.hooks[name];
    if (!hook) return { kind: 'success' };
    const deadline = AbortSignal.timeout(deadlineMs);
    const ctx: HookContext = {
      packageId: pkg.id,
      hook: name,
      installId: install.id,
      agentId: install.agentId,
      idempotencyKey: idempotencyKey(['mesh.lifecycle.v1', transition.idempotencyKey]),
      signal: AbortSignal.any([stop, deadline]),
      services: context.services,
      config: context.config,
      state: install.hookState,
      secret: (kind) =>
        candidate && kind === candidate.kind
          ? Promise.resolve(candidate.value)
          : context.secret(kind),
      fetch: context.fetch,
    };
    try {
      return await hook(ctx);
    } catch (error) {
      stop.throwIfAborted();
      // A secret the install does not hold: no attempt can succeed until an operator captures it.
      if (hasCode(error, 'secret_missing')) return { kind: 'terminal', reason: error.message };
      // The hook's own words may quote what it was handed: the operator reads only what failed.
      return {
        kind: 'retryable',
        reason: deadline.aborted
          ? `${name} did not finish within ${Math.round(deadlineMs / 1000)} s`
          : `${name} failed without an outcome (${error instanceof Error ? error.name : 'a non-error was thrown'})`,
      };
    }
  };

  /** Attempts the transition's hook until it ends, and records the end. */
  const drive = async (
    pkg: LifecyclePackage,
    started: TransitionRecord,
    install: InstallRecord,
    candidate?: LifecycleRequest['candidate'],
  ): Promise<LifecycleResult> => {
    const context = await options.contextFor(install.agentId, install.packageId);
    // A rotation's candidate lives only in the process that was handed it: one cut by a crash
    // is settled by whether the new version was stored before the process stopped.
    if (started.action === 'rotate' && started.detail === CANDIDATE_DETAIL && !candidate) {
      const kept = context.secretVersion !== started.secretVersion;
      await store.finish(await store.attempt(started.id), {
        outcome: kept ? 'succeeded' : 'failed',
        installState: 'enabled',
        compensate: false,
        ...(kept
          ? {}
          : { error: 'the process stopped before the new secret was kept; capture it again' }),
      });
      return settled(install, started.id);
    }
    if (started.action === 'disable') {
      const detail = await settleInFlight(pkg, install);
      if (detail !== undefined) await store.noteDetail(started.id, detail);
    }
    for (;;) {
      stop.throwIfAborted();
      const transition = await store.attempt(started.id);
      const outcome = await attemptHook(pkg, transition, install, context, candidate);
      if (outcome.kind === 'success') {
        if (candidate) {
          if (!options.captureSecret)
            throw new LifecycleError('lifecycle_misuse', 'this executor cannot store secrets');
          await options.captureSecret(
            install.agentId,
            install.packageId,
            candidate.kind,
            candidate.value,
          );
        }
        await store.finish(transition, {
          outcome: 'succeeded',
          installState: transition.toState,
          ...(outcome.state === undefined ? {} : { hookState: outcome.state }),
        });
        return settled(install, transition.id);
      }
      const spent = outcome.kind === 'retryable' && transition.attempts >= retry.maxAttempts;
      if (outcome.kind === 'terminal' || spent) {
        const error = spent
          ? `${outcome.reason} (gave up after ${transition.attempts} attempts)`
          : outcome.reason;
        // A refused candidate leaves the version in use, and the install as it was.
        await store.finish(
          transition,
          candidate
            ? { outcome: 'failed', installState: 'enabled', error, compensate: false }
            : { outcome: 'failed', installState: 'error', error },
        );
        return settled(install, transition.id);
      }
      await store.noteRetry(transition.id, outcome.reason);
      await sleep(backoffDelayMs(retry, transition.attempts, options.random), stop);
    }
  };

  const settled = async (install: InstallRecord, transitionId: string) => {
    const [now, history] = await Promise.all([
      store.findInstall(install.agentId, install.packageId),
      store.history(install.id),
    ]);
    const transition = history.find((t) => t.id === transitionId);
    return { install: now ?? install, ...(transition ? { transition } : {}) };
  };

  /** Finishes what a crash cut on this install, if anything; the install as it then is. */
  const resumeCut = async (pkg: LifecyclePackage, install: InstallRecord) => {
    const cut = await store.unfinished(install.id);
    if (!cut) return install;
    const done = await drive(pkg, cut, install);
    return done.install;
  };

  const begin = async (
    install: InstallRecord,
    pkg: LifecyclePackage,
    action: LifecycleAction,
    actor: string,
    to: InstallState,
    during: InstallState,
  ): Promise<TransitionRecord> => {
    const context = await options.contextFor(install.agentId, install.packageId);
    const id = randomUUID();
    return store.begin(
      {
        id,
        installId: install.id,
        action,
        requestedBy: actor,
        fromState: install.state,
        toState: to,
        packageVersion: pkg.version,
        packageDigest: pkg.digest,
        configVersion: context.configVersion,
        secretVersion: context.secretVersion,
        idempotencyKey: idempotencyKey([
          'mesh.lifecycle.transition.v1',
          install.id,
          id,
          context.configVersion,
          context.secretVersion,
        ]).key,
      },
      during,
    );
  };

  const run = async (request: LifecycleRequest): Promise<LifecycleResult> => {
    const pkg = packageFor(request.packageId);
    const found = await store.install(request.agentId, request.packageId, pkg, initialState(pkg));
    const install = await resumeCut(pkg, found);
    const plan = PLAN[request.action];
    if (request.action === 'enable' && install.state === 'enabled') return { install };
    if (request.action === 'disable' && install.state === 'disabled') return { install };
    if (WHEN_ENABLED[request.action] && install.state !== 'enabled')
      throw new LifecycleError(
        'install_not_enabled',
        `${request.packageId} is ${install.state} for this agent: only an enabled install can be ${WHEN_ENABLED[request.action]}`,
      );
    if (request.action === 'upgrade' && install.packageDigest === pkg.digest) return { install };
    const transition = await begin(
      install,
      pkg,
      request.action,
      request.actor,
      plan.to,
      plan.during,
    );
    if (request.candidate) await store.noteDetail(transition.id, CANDIDATE_DETAIL);
    if (request.action === 'upgrade') {
      // The migration is part of the transition: recorded (begun) before, said in its detail.
      const migrated = await options.migrateConfig?.(request.agentId, request.packageId);
      await store.noteDetail(
        transition.id,
        `upgraded from ${install.packageVersion} (${install.packageDigest.slice(0, 19)}…) to ${pkg.version} (${pkg.digest.slice(0, 19)}…)${migrated ? `; config: ${migrated}` : ''}`,
      );
    }
    return drive(pkg, transition, { ...install, state: plan.during }, request.candidate);
  };

  const held = async <T>(agentId: string, packageId: string, fn: () => Promise<T>) => {
    const result = await store.serialize(agentId, packageId, fn);
    if (result === undefined) throw new Error('the install lock was not taken');
    return result;
  };

  return Object.freeze({
    /** Moves an install (enable, disable), checks it (health) or rotates its secret, serialized. */
    request(request: LifecycleRequest): Promise<LifecycleResult> {
      return held(request.agentId, request.packageId, () => run(request));
    },

    /**
     * Settles an install parked in `error`: `retry` runs the failed action's hook again (a failed
     * health check re-enables), `abandon` records that the operator accepts the provider state
     * as it is and moves the install to `disabled`. Either resolves its compensation tasks.
     */
    compensate(
      agentId: string,
      packageId: string,
      how: 'retry' | 'abandon',
      actor: string,
    ): Promise<LifecycleResult> {
      return held(agentId, packageId, async () => {
        const pkg = packageFor(packageId);
        const install = await resumeCut(
          pkg,
          await store.install(agentId, packageId, pkg, initialState(pkg)),
        );
        const open = (await store.compensations(install.id)).filter((c) => c.state === 'open');
        const last = open.at(-1);
        if (install.state !== 'error' || !last)
          throw new LifecycleError(
            'no_compensation',
            `${packageId} has no open compensation task for this agent (it is ${install.state})`,
          );
        await store.resolveCompensations(
          install.id,
          how === 'retry' ? 'retried' : 'abandoned',
          actor,
        );
        if (how === 'retry')
          return run({ agentId, packageId, action: retriedAs(last.action), actor });
        const transition = await begin(install, pkg, 'abandon', actor, 'disabled', 'error');
        await store.finish(await store.attempt(transition.id), {
          outcome: 'succeeded',
          installState: 'disabled',
          hookState: {},
        });
        return settled(install, transition.id);
      });
    },

    drifted,

    /**
     * Upgrades every enabled install pinned to another version of its package than the one
     * running (Mesh was upgraded): each is an explicit transition, attributed to `actor`, the
     * operator who asked (or whose standing instruction this is): it runs on_enable. Returns how
     * many it upgraded; an install another process holds is left for the next sweep.
     */
    async upgradeDrifted(actor: string): Promise<number> {
      let upgraded = 0;
      for (const install of await drifted()) {
        const done = await store.serialize(
          install.agentId,
          install.packageId,
          () =>
            run({
              agentId: install.agentId,
              packageId: install.packageId,
              action: 'upgrade',
              actor,
            }),
          { wait: false },
        );
        if (done?.transition) upgraded++;
      }
      return upgraded;
    },

    /**
     * Resumes every transition a crash cut whose install no live process holds (a replica still
     * driving one keeps it): run at start-up and from time to time. Returns how many it finished.
     */
    async resumeUnfinished(): Promise<number> {
      let resumed = 0;
      for (const install of await store.withUnfinished()) {
        const pkg = options.packageOf(install.packageId);
        if (!pkg) continue;
        const done = await store.serialize(
          install.agentId,
          install.packageId,
          async () => {
            const now = await store.install(
              install.agentId,
              install.packageId,
              pkg,
              initialState(pkg),
            );
            const cut = await store.unfinished(now.id);
            if (!cut) return false;
            await drive(pkg, cut, now);
            return true;
          },
          { wait: false },
        );
        if (done) resumed++;
      }
      return resumed;
    },
  });
}

export type LifecycleExecutor = ReturnType<typeof createLifecycleExecutor>;
