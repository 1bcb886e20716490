import { systemClock, type Clock } from '../tool/clock.ts';
import { MeshError } from '../tool/errors.ts';

/** How often, and how patiently, one model call is retried. */
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

/**
 * The wait a server asked for, in milliseconds, or undefined when it asked for none we can read.
 * Reads `retry-after-ms` (OpenAI's) and `Retry-After` as delta-seconds or an HTTP date; an HTTP
 * date is measured from `clock`'s now, and one in the past means "now".
 */
export function retryAfterMs(
  headers: Headers | undefined,
  clock: Clock = systemClock,
): number | undefined {
  const ms = headers?.get('retry-after-ms')?.trim();
  if (ms !== undefined && /^\d+(\.\d+)?$/.test(ms)) return Math.ceil(Number(ms));
  const value = headers?.get('retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.ceil(Number(value) * 1000);
  // Date.parse accepts almost anything ("-5" is 5 BC); an HTTP date always names its month.
  const date = /[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.max(0, date - clock.now().getTime());
}

/** Waits `ms`, or rejects with the signal's reason (as `fetch` does) as soon as it aborts. */
export async function sleep(ms: number, signal: AbortSignal): Promise<void> {
  signal.throwIfAborted();
  await new Promise<void>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
  signal.throwIfAborted();
}
