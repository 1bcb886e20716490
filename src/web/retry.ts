import { retrying, sleep as sleepUnlessAborted } from '../tool/retry-policy.ts';
import { isQueryProviderError, QueryProviderError } from './provider.ts';

/** How {@link withRetries} spends a call's attempts. */
export interface RetryOptions {
  /** Attempts allowed, the first included; 0 refuses the call without making one. */
  readonly maxAttempts: number;
  /** Stops the waits and the attempts; an abort rejects with the signal's reason. */
  readonly signal: AbortSignal;
  /**
   * Called before every attempt, retries included (1 for the first), before any wait. Throwing
   * refuses that attempt: the call rejects with what was thrown. A per-run call ceiling counts here.
   */
  readonly onAttempt?: (attempt: number) => void;
  /** The backoff ceiling before the first retry; it doubles per retry (default 500 ms). */
  readonly baseDelayMs?: number;
  /** No wait exceeds this, not even one the provider asked for (default 10 s). */
  readonly maxDelayMs?: number;
  /** Waits `ms` unless `signal` aborts first (tests pass one that does not sleep). */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where the jitter comes from (default Math.random). */
  readonly random?: () => number;
}

const DEFAULT_BASE_DELAY_MS = 500;
/** A web search is one step of a model's turn: waiting longer than this is worse than failing. */
const DEFAULT_MAX_DELAY_MS = 10_000;

/**
 * Runs `attempt` until it succeeds, fails for good, or the attempts run out. Only a retryable
 * {@link QueryProviderError} (rate limited, provider down) is retried, after full-jitter backoff
 * or the provider's Retry-After (capped by `maxDelayMs`). The final failure is rethrown with
 * `attempts` set; anything else an attempt throws (a bug, the caller's abort) propagates at once.
 * With `maxAttempts` 0 it throws a `rate_limited` error with `attempts: 0` and sends nothing: the
 * caller's quota is spent.
 */
export async function withRetries<T>(
  attempt: (attempt: number) => Promise<T>,
  options: RetryOptions,
): Promise<T> {
  const { maxAttempts, signal, onAttempt } = options;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 0) {
    throw new RangeError('maxAttempts must be an integer of at least 0');
  }
  const policy = {
    maxAttempts,
    baseDelayMs: options.baseDelayMs ?? DEFAULT_BASE_DELAY_MS,
    maxDelayMs: options.maxDelayMs ?? DEFAULT_MAX_DELAY_MS,
  };
  const sleep = options.sleep ?? sleepUnlessAborted;
  if (maxAttempts === 0) {
    throw new QueryProviderError('rate_limited', 'no query-provider attempts are left', {
      attempts: 0,
    });
  }
  // Every failure of an attempt says how many attempts were made by then.
  const counted = (n: number) =>
    attempt(n).catch((error: unknown) => {
      throw isQueryProviderError(error) ? error.withAttempts(n) : error;
    });
  return retrying(counted, {
    policy,
    signal,
    ...(onAttempt ? { onAttempt: (n: number) => onAttempt(n) } : {}),
    sleep,
    ...(options.random ? { random: options.random } : {}),
    judge: (error) =>
      isQueryProviderError(error) && error.retryable
        ? error.retryAfterMs === undefined
          ? {}
          : { retryAfterMs: error.retryAfterMs }
        : undefined,
  });
}
