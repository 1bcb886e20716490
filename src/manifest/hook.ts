import type { JsonValue } from '../model/json.ts';
import type { Services } from '../tool/context.ts';
import type { HookName } from './package-manifest.ts';

/**
 * What a lifecycle hook is handed (hook protocol 1). Hooks are real, effectful code run by the
 * durable lifecycle executor after an explicit operator action, never during a crawl.
 */
export interface HookContext {
  readonly packageId: string;
  readonly hook: HookName;
  /** The package install the transition is for; secret ownership derives from it, not the manifest. */
  readonly installId: string;
  /** Stable per (install, transition, config and secret version): a retry reconciles, never duplicates. */
  readonly idempotencyKey: string;
  readonly signal: AbortSignal;
  readonly services: Services;
  /** The install's config values (config and public dispositions; never secrets). */
  readonly config: Readonly<Record<string, JsonValue>>;
}

/** A hook's typed outcome: the lifecycle executor retries `retryable` and surfaces `terminal`. */
export type HookOutcome =
  | { readonly kind: 'success' }
  | { readonly kind: 'retryable'; readonly reason: string }
  | { readonly kind: 'terminal'; readonly reason: string };

/** A package hook: a named export of `tools/<name>/hooks.ts`. */
export type PackageHook = (ctx: HookContext) => Promise<HookOutcome>;
