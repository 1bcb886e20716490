import { randomUUID } from 'node:crypto';
import type { HookContext, HookOutcome } from '../tool/hook.ts';
import type { HookName } from '../manifest/package-manifest.ts';
import type { InFlightPolicy } from '../manifest/package-manifest.ts';
import type { PackageHooks } from '../manifest/verify-catalog.ts';
import type { JsonValue } from '../model/json.ts';
import type { HttpFetch, Services } from '../tool/context.ts';
import { hasCode, MeshError } from '../tool/errors.ts';
import { idempotencyKey } from '../tool/idempotency.ts';
import {
  backoffDelayMs,
  retryPolicy,
  sleep as abortableSleep,
  type RetryPolicy,
} from '../tool/retry-policy.ts';
import type {
  InstallRecord,
  InstallState,
  LifecycleAction,
  LifecycleStore,
  TransitionRecord,
} from './records.ts';

/** A package as the lifecycle sees it: what installs pin to, and its bound hooks. */
export interface LifecyclePackage {
  readonly id: string;
  readonly version: string;
  readonly digest: string;
  readonly hooks: PackageHooks;
  /** What a disable does with the package's calls still running (the manifest's `in_flight`). */
  readonly inFlight: InFlightPolicy;
}

/** What a hook of one install is handed, read when a transition begins (or resumes). */
export interface InstallContext {
  readonly config: Readonly<Record<string, JsonValue>>;
  /** sha256 of the config values. */
  readonly configVersion: string;
  /** `kind@version` of each secret the install holds, comma-separated (`none` without). */
  readonly secretVersion: string;
  secret(kind: string): Promise<string>;
  readonly fetch: HttpFetch;
  readonly services: Services;
}

export interface LifecycleOptions {
  readonly store: LifecycleStore;
  packageOf(packageId: string): LifecyclePackage | undefined;
  contextFor(agentId: string, packageId: string): Promise<InstallContext>;
  /** Attempts per transition and their backoff (default: 4 attempts, 250 ms doubling to 10 s). */
  readonly retry?: RetryPolicy;
  /** How long one hook attempt may take before it counts as a retryable failure (default 30 s). */
  readonly attemptDeadlineMs?: number;
  /** How long a disable waits for in-flight calls to end before it cancels them (default 60 s). */
  readonly drainMs?: number;
  /** How often a drain looks again (default 250 ms). */
  readonly drainPollMs?: number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly random?: () => number;
  /** Aborted when the process stops: a hook in flight is abandoned, its transition left running. */
  readonly signal?: AbortSignal;
}

/** What a request did: the install as it now is, and the transition it made (none when already there). */
export interface LifecycleResult {
  readonly install: InstallRecord;
  readonly transition?: TransitionRecord;
}

export interface LifecycleRequest {
  readonly agentId: string;
  readonly packageId: string;
  readonly action: Exclude<LifecycleAction, 'abandon'>;
  /** Who asks: `operator:<name>`, or `mesh`. */
  readonly actor: string;
}

/** The lifecycle refused a request: an unknown package, or an action the install's state does not allow. */
export class LifecycleError extends MeshError {}

export const DEFAULT_LIFECYCLE_RETRY: RetryPolicy = retryPolicy({
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
});

/** Each action's hook, the state a success ends in, and the state the install holds meanwhile. */
const PLAN: Record<
  Exclude<LifecycleAction, 'abandon'>,
  { readonly hook: HookName; readonly to: InstallState; readonly during: InstallState }
> = {
  enable: { hook: 'on_enable', to: 'enabled', during: 'enabling' },
  disable: { hook: 'on_disable', to: 'disabled', during: 'disabling' },
  health: { hook: 'health_check', to: 'enabled', during: 'enabled' },
  rotate: { hook: 'on_secret_capture', to: 'enabled', during: 'enabled' },
  // A new version of the package: its on_enable runs again, reconciling what enabling made with
  // the version now running, and the install is pinned to it.
  upgrade: { hook: 'on_enable', to: 'enabled', during: 'enabled' },
};

/** The actions only an enabled install takes, as the refusal says them. */
const WHEN_ENABLED: Partial<Record<LifecycleAction, string>> = {
  health: 'health-checked',
  rotate: 'rotated',
  upgrade: 'upgraded',
};

/** The action a failed transition's compensation retries: a failed health check re-enables. */
function retriedAs(action: LifecycleAction): Exclude<LifecycleAction, 'abandon'> {
  if (action === 'health' || action === 'upgrade' || action === 'abandon') return 'enable';
  return action;
}

const STOPPED = new AbortController().signal;

/** Where a package's install starts: off when enabling it does something, else on by default. */
export function initialState(pkg: Pick<LifecyclePackage, 'hooks'>): InstallState {
  return pkg.hooks.on_enable === undefined ? 'enabled' : 'disabled';
}

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
      secret: (kind) => context.secret(kind),
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
  ): Promise<LifecycleResult> => {
    const context = await options.contextFor(install.agentId, install.packageId);
    if (started.action === 'disable') {
      const detail = await settleInFlight(pkg, install);
      if (detail !== undefined) await store.noteDetail(started.id, detail);
    }
    for (;;) {
      stop.throwIfAborted();
      const transition = await store.attempt(started.id);
      const outcome = await attemptHook(pkg, transition, install, context);
      if (outcome.kind === 'success') {
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
        await store.finish(transition, { outcome: 'failed', installState: 'error', error });
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
    if (request.action === 'upgrade')
      await store.noteDetail(
        transition.id,
        `upgraded from ${install.packageVersion} (${install.packageDigest.slice(0, 19)}…) to ${pkg.version} (${pkg.digest.slice(0, 19)}…)`,
      );
    return drive(pkg, transition, { ...install, state: plan.during });
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

    /**
     * Upgrades every enabled install pinned to another version of its package than the one
     * running (Mesh was upgraded): each is an explicit transition, attributed to `actor`. Returns
     * how many it upgraded; an install another process holds is left for the next sweep.
     */
    async upgradeDrifted(actor = 'mesh'): Promise<number> {
      let upgraded = 0;
      for (const install of await store.enabledInstalls()) {
        const pkg = options.packageOf(install.packageId);
        if (!pkg || pkg.digest === install.packageDigest) continue;
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

/** The config version a transition pins: sha256 of the values in key order. */
export function configVersionOf(config: Readonly<Record<string, JsonValue>>): string {
  const sorted = Object.keys(config)
    .sort()
    .map((key) => [key, config[key] ?? null]);
  return idempotencyKey(['mesh.config.v1', JSON.stringify(sorted)]).key;
}
