import { MeshError } from './errors.ts';

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

// The wait a server asks for, and an abortable sleep.
export { retryAfterMs, sleep } from './retry-after.ts';
