import { hasCode } from '../tool/errors.ts';
import type { HookContext, HookOutcome } from '../tool/hook.ts';
import { idempotencyKey } from '../tool/idempotency.ts';
import {
  PLAN,
  type InstallContext,
  type LifecycleOptions,
  type LifecyclePackage,
  type LifecycleRequest,
} from './contract.ts';
import type { InstallRecord, LifecycleAction, TransitionRecord } from './records.ts';

/*
 * The two steps of a transition that reach outside the executor's records: one attempt of the
 * package's hook, and a disable's wait for the calls still in flight.
 */

/** What one attempt of a transition's hook is made with. */
export interface HookAttempt {
  readonly pkg: LifecyclePackage;
  readonly transition: TransitionRecord;
  readonly install: InstallRecord;
  readonly context: InstallContext;
  readonly candidate: LifecycleRequest['candidate'];
}

/** One attempt of a hook, its failures (a throw, the deadline) made outcomes. */
export async function attemptHook(
  { pkg, transition, install, context, candidate }: HookAttempt,
  stop: AbortSignal,
  deadlineMs: number,
): Promise<HookOutcome> {
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
}

/** How a disable waits for the calls in flight. */
export interface DrainWaits {
  readonly drainMs: number;
  readonly drainPollMs: number;
  readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly stop: AbortSignal;
}

/**
 * A disable's calls in flight (its tools are already withheld): drained — waited for, up to
 * `drainMs`, then cancelled — or cancelled at once, as the package declares. Says what it did.
 */
export async function settleInFlight(
  store: LifecycleOptions['store'],
  pkg: LifecyclePackage,
  install: InstallRecord,
  waits: DrainWaits,
): Promise<string | undefined> {
  const running = await store.inFlightCalls(install.agentId, install.packageId);
  if (running === 0) return undefined;
  if (pkg.inFlight === 'drain') {
    const until = Date.now() + waits.drainMs;
    let left = running;
    while (left > 0 && Date.now() < until) {
      await waits.sleep(waits.drainPollMs, waits.stop);
      left = await store.inFlightCalls(install.agentId, install.packageId);
    }
    if (left === 0) return `drained ${running} call(s) in flight`;
  }
  const cancelled = await store.cancelInFlight(install.agentId, install.packageId);
  return pkg.inFlight === 'drain'
    ? `drained for ${Math.round(waits.drainMs / 1000)} s, then cancelled ${cancelled} run(s) still calling the package`
    : `cancelled ${cancelled} run(s) calling the package`;
}
