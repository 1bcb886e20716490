import type { JsonObject, JsonValue } from '../model/json.ts';
import type { HttpFetch, Services } from './context.ts';
import type { EffectKey } from './outbound.ts';

/** The lifecycle junctures a package may participate in. */
export type HookName = 'on_enable' | 'on_disable' | 'on_secret_capture' | 'health_check';

/**
 * What a lifecycle hook is handed (hook protocol 1). Hooks are real, effectful code run by the
 * durable lifecycle executor after an explicit operator action, never during a crawl. A hook may
 * be run again for the same transition (after a crash, or a retryable outcome): it must reconcile
 * through `idempotencyKey` (find what an earlier attempt made) rather than act twice.
 */
export interface HookContext {
  readonly packageId: string;
  readonly hook: HookName;
  /** The package install the transition is for; secret ownership derives from it, not the manifest. */
  readonly installId: string;
  readonly agentId: string;
  /**
   * Stable per (install, transition, config version, secret version): every attempt of one
   * transition gets the same key, in hex and as a UUID for providers that take a client-chosen id.
   */
  readonly idempotencyKey: EffectKey;
  /** Aborted at the attempt's deadline, or when the executor stops. */
  readonly signal: AbortSignal;
  readonly services: Services;
  /** The install's config values (config and public dispositions; never secrets). */
  readonly config: Readonly<Record<string, JsonValue>>;
  /** What the package's hooks kept for this install (a registered webhook's id), `{}` at first. */
  readonly state: JsonObject;
  /**
   * The install's secret of `kind`, at the version the transition is pinned to. Hand it to the
   * vendor call that needs it and nowhere else: never return, log or put it in a reason.
   */
  secret(kind: string): Promise<string>;
  /** The control plane's guarded fetch (loopback only when the install's config allows it). */
  readonly fetch: HttpFetch;
}

/**
 * A hook's typed outcome: the lifecycle executor retries `retryable` (with backoff, within the
 * transition's attempts) and surfaces `terminal` (the install parks in `error` with a
 * compensation task). A success may replace what the hooks keep for the install (`state`).
 * Reasons are shown to operators: they name what failed, never a secret or a value.
 */
export type HookOutcome =
  | { readonly kind: 'success'; readonly state?: JsonObject }
  | { readonly kind: 'retryable'; readonly reason: string }
  | { readonly kind: 'terminal'; readonly reason: string };

/** A package hook: a named export of `tools/<name>/hooks.ts`. */
export type PackageHook = (ctx: HookContext) => Promise<HookOutcome>;
