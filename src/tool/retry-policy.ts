import { MeshError } from './errors.ts';
import { sleep } from './retry-after.ts';

// The wait a server asks for, and an abortable sleep.
export { retryAfterMs, sleep } from './retry-after.ts';

/*
 * One retry policy and one backoff for whatever Mesh retries: model calls (src/providers), query
 * providers (src/web), and the packages' own vendor clients. In src/tool, below all of them, so
 * none imports another's (web/ used to import providers/ for this).
 */

/** How often, and how patiently, one call is retried. */
export interface RetryPolicy {
  /** HTTP attempts per call, the first included. */
  readonly maxAttempts: number;
  /** The backoff ceiling before the first retry; it doubles for each later retry. */
  readonly baseDelayMs: number;
  /** No wait exceeds this, not even one a server asks for with Retry-After. */
  readonly maxDelayMs: number;
}

/** Four attempts spread over at most about a minute and a half of waiting. */
export const DEFAULT_RETRY_POLICY: RetryPolicy = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 500,
  maxDelayMs: 30_000,
});

/**
 * Completes a partial policy with the defaults and refuses one that cannot work, so a bad row in
 * `model_providers` fails when the client is built rather than on the first call.
 */
export function retryPolicy(partial: Partial<RetryPolicy> = {}): RetryPolicy {
  const policy = { ...DEFAULT_RETRY_POLICY, ...partial };
  const problems: string[] = [];
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1) {
    problems.push('maxAttempts must be an integer of at least 1');
  }
  for (const field of ['baseDelayMs', 'maxDelayMs'] as const) {
    if (!Number.isFinite(policy[field]) || policy[field] < 0) {
      problems.push(`${field} must be a finite number of at least 0`);
    }
  }
  if (problems.length > 0) {
    throw new MeshError('invalid_retry_policy', `retry policy: ${problems.join('; ')}`);
  }
  return Object.freeze(policy);
}

/**
 * "Full jitter" backoff before retry number `retry` (1 for the first retry): uniform in
 * [0, min(maxDelayMs, baseDelayMs · 2^(retry−1))]. Spreading retries over the whole window stops
 * many runs that failed together from retrying together.
 */
export function backoffDelayMs(
  policy: RetryPolicy,
  retry: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));
  return Math.round(random() * ceiling);
}

/** A failed attempt that may be made again, with the wait its server asked for, if any. */
export interface Retryable {
  readonly retryAfterMs?: number;
}

/** How {@link retrying} spends a call's attempts. */
export interface RetryingOptions {
  readonly policy: RetryPolicy;
  /** Stops the waits and the attempts; an abort rejects with the signal's reason. */
  readonly signal: AbortSignal;
  /**
   * Whether what an attempt threw may be retried (and after how long the server asked for), or
   * undefined when it is final: then it is rethrown at once.
   */
  judge(error: unknown): Retryable | undefined;
  /**
   * What to throw when the attempts are spent (default: the last failure itself), given the last
   * failure and the attempts made.
   */
  giveUp?(error: unknown, attempts: number): unknown;
  /**
   * Called before every attempt (1 for the first) with the wait before it and the failure it
   * retries, before waiting. Throwing refuses the attempt: the call rejects with what was thrown.
   */
  onAttempt?(attempt: number, delayMs: number, previous: unknown): void;
  /** Waits `ms` unless `signal` aborts first (tests pass one that does not sleep). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where the jitter comes from (default Math.random). */
  readonly random?: () => number;
}

/**
 * Runs `attempt` until it succeeds, fails for good, or the policy's attempts are spent: the one
 * retry loop of Mesh (model calls, query providers, vendor clients, the outbox's deliveries).
 * A retryable failure waits full-jitter backoff, or the server's Retry-After capped by
 * `maxDelayMs`; anything `judge` does not call retryable propagates at once.
 */
export async function retrying<T>(
  attempt: (attempt: number) => Promise<T>,
  options: RetryingOptions,
): Promise<T> {
  const { policy, signal } = options;
  const wait = options.sleep ?? sleep;
  let previous: { readonly error: unknown; readonly retry: Retryable } | undefined;
  for (let n = 1; ; n++) {
    signal.throwIfAborted();
    const delayMs =
      previous === undefined
        ? 0
        : previous.retry.retryAfterMs === undefined
          ? backoffDelayMs(policy, n - 1, options.random)
          : Math.min(previous.retry.retryAfterMs, policy.maxDelayMs);
    options.onAttempt?.(n, delayMs, previous?.error);
    if (previous !== undefined) await wait(delayMs, signal);
    try {
      return await attempt(n);
    } catch (error) {
      signal.throwIfAborted();
      const retry = options.judge(error);
      if (retry === undefined) throw error;
      if (n >= policy.maxAttempts) throw options.giveUp ? options.giveUp(error, n) : error;
      previous = { error, retry };
    }
  }
}
