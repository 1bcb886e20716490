import { randomUUID } from 'node:crypto';
import type { HookOutcome } from '../tool/hook.ts';
import { attemptHook, settleInFlight, type DrainWaits } from './hook-attempt.ts';
import { idempotencyKey } from '../tool/idempotency.ts';
import { backoffDelayMs, retrying, sleep as abortableSleep } from '../tool/retry-policy.ts';
import {
  CANDIDATE_DETAIL,
  DEFAULT_LIFECYCLE_RETRY,
  initialState,
  LifecycleError,
  PLAN,
  retriedAs,
  WHEN_ENABLED,
  type LifecycleOptions,
  type LifecyclePackage,
  type LifecycleRequest,
  type LifecycleResult,
} from './contract.ts';
import type { InstallRecord, InstallState, LifecycleAction, TransitionRecord } from './records.ts';

const STOPPED = new AbortController().signal;

/** A hook's retryable outcome, recorded: {@link retrying} waits the backoff and attempts again. */
class RetryableOutcome extends Error {
  constructor(readonly retryAfterMs: number) {
    super('the hook may be attempted again');
  }
}

/**
 * The durable lifecycle executor: every enable, disable, health check and rotation of an install
 * is an attributed transition record, pinned to the package and the config and secret versions
 * in force, run under the install's lock (one at a time, across replicas), its hook attempted
 * with one idempotency key until it succeeds, fails for good, or its attempts are spent. A
 * transition a crash cut is resumed (the same hook, the same key) before anything else is done
 * to its install, and a failure parks the install in `error` with a compensation task.
 */
export class LifecycleExecutor {
  readonly #options: LifecycleOptions;
  readonly #store: LifecycleOptions['store'];
  readonly #retry: NonNullable<LifecycleOptions['retry']>;
  readonly #deadlineMs: number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #stop: AbortSignal;
  readonly #waits: DrainWaits;

  constructor(options: LifecycleOptions) {
    this.#options = options;
    this.#store = options.store;
    this.#retry = options.retry ?? DEFAULT_LIFECYCLE_RETRY;
    this.#deadlineMs = options.attemptDeadlineMs ?? 30_000;
    this.#sleep = options.sleep ?? abortableSleep;
    this.#stop = options.signal ?? STOPPED;
    this.#waits = {
      drainMs: options.drainMs ?? 60_000,
      drainPollMs: options.drainPollMs ?? 250,
      sleep: this.#sleep,
      stop: this.#stop,
    };
  }

  /** Every enabled install pinned to another build of its package than the one running. */
  async drifted(): Promise<InstallRecord[]> {
    return (await this.#store.enabledInstalls()).filter((install) => {
      const pkg = this.#options.packageOf(install.packageId);
      return pkg !== undefined && pkg.digest !== install.packageDigest;
    });
  }

  /** Moves an install (enable, disable), checks it (health) or rotates its secret, serialized. */
  request(request: LifecycleRequest): Promise<LifecycleResult> {
    return this.#held(request.agentId, request.packageId, () => this.#run(request));
  }

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
    return this.#held(agentId, packageId, async () => {
      const store = this.#store;
      const pkg = this.#packageFor(packageId);
      const install = await this.#resumeCut(
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
        return this.#run({ agentId, packageId, action: retriedAs(last.action), actor });
      const transition = await this.#begin(install, pkg, 'abandon', actor, 'disabled', 'error');
      await store.finish(await store.attempt(transition.id), {
        outcome: 'succeeded',
        installState: 'disabled',
        hookState: {},
      });
      return this.#settled(install, transition.id);
    });
  }

  /**
   * Upgrades every enabled install pinned to another version of its package than the one
   * running (Mesh was upgraded): each is an explicit transition, attributed to `actor`, the
   * operator who asked (or whose standing instruction this is): it runs on_enable. Returns how
   * many it upgraded; an install another process holds is left for the next sweep.
   */
  async upgradeDrifted(actor: string): Promise<number> {
    let upgraded = 0;
    for (const install of await this.drifted()) {
      const { agentId, packageId } = install;
      const done = await this.#store.serialize(
        agentId,
        packageId,
        () => this.#run({ agentId, packageId, action: 'upgrade', actor }),
        { wait: false },
      );
      if (done?.transition) upgraded++;
    }
    return upgraded;
  }

  /**
   * Resumes every transition a crash cut whose install no live process holds (a replica still
   * driving one keeps it): run at start-up and from time to time. Returns how many it finished.
   */
  async resumeUnfinished(): Promise<number> {
    const store = this.#store;
    let resumed = 0;
    for (const install of await store.withUnfinished()) {
      const pkg = this.#options.packageOf(install.packageId);
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
          await this.#drive(pkg, cut, now);
          return true;
        },
        { wait: false },
      );
      if (done) resumed++;
    }
    return resumed;
  }

  async #run(request: LifecycleRequest): Promise<LifecycleResult> {
    const store = this.#store;
    const pkg = this.#packageFor(request.packageId);
    const found = await store.install(request.agentId, request.packageId, pkg, initialState(pkg));
    const install = await this.#resumeCut(pkg, found);
    const plan = PLAN[request.action];
    if (request.action === 'enable' && install.state === 'enabled') return { install };
    if (request.action === 'disable' && install.state === 'disabled') return { install };
    if (WHEN_ENABLED[request.action] && install.state !== 'enabled')
      throw new LifecycleError(
        'install_not_enabled',
        `${request.packageId} is ${install.state} for this agent: only an enabled install can be ${WHEN_ENABLED[request.action]}`,
      );
    if (request.action === 'upgrade' && install.packageDigest === pkg.digest) return { install };
    const transition = await this.#begin(
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
      const migrated = await this.#options.migrateConfig?.(request.agentId, request.packageId);
      await store.noteDetail(
        transition.id,
        `upgraded from ${install.packageVersion} (${install.packageDigest.slice(0, 19)}…) to ${pkg.version} (${pkg.digest.slice(0, 19)}…)${migrated ? `; config: ${migrated}` : ''}`,
      );
    }
    return this.#drive(pkg, transition, { ...install, state: plan.during }, request.candidate);
  }

  async #held<T>(agentId: string, packageId: string, fn: () => Promise<T>): Promise<T> {
    const result = await this.#store.serialize(agentId, packageId, fn);
    if (result === undefined) throw new Error('the install lock was not taken');
    return result;
  }

  #packageFor(packageId: string): LifecyclePackage {
    const pkg = this.#options.packageOf(packageId);
    if (!pkg) throw new LifecycleError('package_not_found', `no package ${packageId} is installed`);
    return pkg;
  }

  /** Finishes what a crash cut on this install, if anything; the install as it then is. */
  async #resumeCut(pkg: LifecyclePackage, install: InstallRecord): Promise<InstallRecord> {
    const cut = await this.#store.unfinished(install.id);
    if (!cut) return install;
    const done = await this.#drive(pkg, cut, install);
    return done.install;
  }

  async #begin(
    install: InstallRecord,
    pkg: LifecyclePackage,
    action: LifecycleAction,
    actor: string,
    to: InstallState,
    during: InstallState,
  ): Promise<TransitionRecord> {
    const context = await this.#options.contextFor(install.agentId, install.packageId);
    const id = randomUUID();
    return this.#store.begin(
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
  }

  /** Attempts the transition's hook until it ends, and records the end. */
  async #drive(
    pkg: LifecyclePackage,
    started: TransitionRecord,
    install: InstallRecord,
    candidate?: LifecycleRequest['candidate'],
  ): Promise<LifecycleResult> {
    const store = this.#store;
    const context = await this.#options.contextFor(install.agentId, install.packageId);
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
      return this.#settled(install, started.id);
    }
    if (started.action === 'disable') {
      const detail = await settleInFlight(store, pkg, install, this.#waits);
      if (detail !== undefined) await store.noteDetail(started.id, detail);
    }
    // The attempts are counted in the transition's record, so a resumed transition goes on from
    // where the crash cut it: the record, not this loop, says when they are spent.
    const ended = await retrying(
      async () => {
        const transition = await store.attempt(started.id);
        const outcome = await attemptHook(
          { pkg, transition, install, context, candidate },
          this.#stop,
          this.#deadlineMs,
        );
        return this.#settleAttempt(transition, outcome, install, candidate);
      },
      {
        policy: { ...this.#retry, maxAttempts: Number.MAX_SAFE_INTEGER },
        signal: this.#stop,
        judge: (error) => (error instanceof RetryableOutcome ? error : undefined),
        sleep: this.#sleep,
      },
    );
    return this.#settled(install, ended.id);
  }

  /** Records an attempt's outcome; throws a {@link RetryableOutcome} when it is to be made again. */
  async #settleAttempt(
    transition: TransitionRecord,
    outcome: HookOutcome,
    install: InstallRecord,
    candidate: LifecycleRequest['candidate'],
  ): Promise<TransitionRecord> {
    const store = this.#store;
    if (outcome.kind === 'success') {
      if (candidate) {
        if (!this.#options.captureSecret)
          throw new LifecycleError('lifecycle_misuse', 'this executor cannot store secrets');
        await this.#options.captureSecret(
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
      return transition;
    }
    const spent = outcome.kind === 'retryable' && transition.attempts >= this.#retry.maxAttempts;
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
      return transition;
    }
    await store.noteRetry(transition.id, outcome.reason);
    throw new RetryableOutcome(
      backoffDelayMs(this.#retry, transition.attempts, this.#options.random),
    );
  }

  async #settled(install: InstallRecord, transitionId: string): Promise<LifecycleResult> {
    const [now, history] = await Promise.all([
      this.#store.findInstall(install.agentId, install.packageId),
      this.#store.history(install.id),
    ]);
    const transition = history.find((t) => t.id === transitionId);
    return { install: now ?? install, ...(transition ? { transition } : {}) };
  }
}

/** The lifecycle executor over `options` (see {@link LifecycleExecutor}). */
export function createLifecycleExecutor(options: LifecycleOptions): LifecycleExecutor {
  return new LifecycleExecutor(options);
}
