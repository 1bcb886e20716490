import type { InFlightPolicy } from '../manifest/package-manifest.ts';
import type { PackageHooks } from '../manifest/verify-catalog.ts';
import type { JsonValue } from '../model/json.ts';
import type { HttpFetch, Services } from '../tool/context.ts';
import { MeshError } from '../tool/errors.ts';
import type { HookName } from '../tool/hook.ts';
import { idempotencyKey } from '../tool/idempotency.ts';
import { retryPolicy, type RetryPolicy } from '../tool/retry-policy.ts';
import type {
  InstallRecord,
  InstallState,
  LifecycleAction,
  LifecycleStore,
  TransitionRecord,
} from './records.ts';

/*
 * What the lifecycle executor is given and answers, and the fixed plan of its actions: which
 * hook each runs, the state it ends in and holds meanwhile.
 */
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
  /**
   * An upgrade's config migration: brings the install's stored values to what the running
   * manifest declares (drops keys it no longer has, resets values it no longer accepts) and says
   * what it changed, or undefined when nothing.
   */
  migrateConfig?(agentId: string, packageId: string): Promise<string | undefined>;
  /** How long a disable waits for in-flight calls to end before it cancels them (default 60 s). */
  readonly drainMs?: number;
  /** How often a drain looks again (default 250 ms). */
  readonly drainPollMs?: number;
  /**
   * Stores a new secret version for the install once its `on_secret_capture` accepted it (the
   * cut-over of a rotation with a candidate). Without it, rotations take no candidate.
   */
  captureSecret?(agentId: string, packageId: string, kind: string, value: string): Promise<void>;
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
  /**
   * A rotation's new secret, not yet stored: `on_secret_capture` is run against it, and only when
   * it succeeds is it stored and used (the version in use stays if it fails).
   */
  readonly candidate?: { readonly kind: string; readonly value: string };
}

/** The lifecycle refused a request: an unknown package, or an action the install's state does not allow. */
export class LifecycleError extends MeshError {}

export const DEFAULT_LIFECYCLE_RETRY: RetryPolicy = retryPolicy({
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
});

/** Each action's hook, the state a success ends in, and the state the install holds meanwhile. */
export const PLAN: Record<
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
  // The install's config changed: on_enable runs again to make what enabling made match it.
  reconfigure: { hook: 'on_enable', to: 'enabled', during: 'enabled' },
};

/** The detail of a rotation run against a new secret not yet stored. */
export const CANDIDATE_DETAIL = 'a new secret, stored only once on_secret_capture accepts it';

/** The actions only an enabled install takes, as the refusal says them. */
export const WHEN_ENABLED: Partial<Record<LifecycleAction, string>> = {
  health: 'health-checked',
  rotate: 'rotated',
  upgrade: 'upgraded',
  reconfigure: 'reconfigured',
};

/**
 * The action a failed transition's compensation retries, from `error`: a failed disable tears
 * down again; anything else (an enable, a health check, an upgrade, a reconfigure, a re-check of
 * the secret in use) enables again, its on_enable making the provider's state match.
 */
export function retriedAs(action: LifecycleAction): 'enable' | 'disable' {
  return action === 'disable' ? 'disable' : 'enable';
}

/** Where a package's install starts: off when enabling it does something, else on by default. */
export function initialState(pkg: Pick<LifecyclePackage, 'hooks'>): InstallState {
  return pkg.hooks.on_enable === undefined ? 'enabled' : 'disabled';
}

/** The config version a transition pins: sha256 of the values in key order. */
export function configVersionOf(config: Readonly<Record<string, JsonValue>>): string {
  const sorted = Object.keys(config)
    .sort()
    .map((key) => [key, config[key] ?? null]);
  return idempotencyKey(['mesh.config.v1', JSON.stringify(sorted)]).key;
}
