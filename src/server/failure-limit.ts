import type { Clock } from '../tool/clock.ts';
import { HttpError } from './http-error.ts';

/** How many failed sign-ins an address may have, refilled evenly over `perMs`. */
export interface FailureLimitOptions {
  readonly failures: number;
  readonly perMs: number;
}

/** Ten failed logins or API tokens a minute per client address. */
export const DEFAULT_FAILURE_LIMIT: FailureLimitOptions = Object.freeze({
  failures: 10,
  perMs: 60_000,
});

/** Addresses remembered at most; past it, addresses with a full allowance are forgotten first. */
const MAX_ADDRESSES = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Failed sign-ins per client address, as a token bucket in this process's memory: each failure
 * takes a token, tokens come back at `failures` per `perMs`, and an address with none left is
 * refused (429 with `Retry-After`) before its token or login is even checked, so a correct guess
 * is not told apart while it is limited. Each replica counts its own; time is the Mesh's clock.
 */
export class FailureLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly perMsRate: number;

  constructor(
    private readonly clock: Clock,
    private readonly options: FailureLimitOptions = DEFAULT_FAILURE_LIMIT,
  ) {
    this.perMsRate = options.failures / options.perMs;
  }

  private bucket(address: string, now: number): Bucket {
    const found = this.buckets.get(address);
    if (!found) return { tokens: this.options.failures, at: now };
    const tokens = Math.min(
      this.options.failures,
      found.tokens + (now - found.at) * this.perMsRate,
    );
    return { tokens, at: now };
  }

  /** Refuses an address that has used up its failures: 429, with the seconds to wait. */
  check(address: string): void {
    const now = this.clock.now().getTime();
    const { tokens } = this.bucket(address, now);
    if (tokens >= 1) return;
    const seconds = Math.max(1, Math.ceil((1 - tokens) / this.perMsRate / 1000));
    throw new HttpError(
      'rate_limited',
      `too many failed sign-ins from this address; try again in ${seconds} s`,
      { 'retry-after': String(seconds) },
    );
  }

  /** Counts one failed sign-in from an address. */
  fail(address: string): void {
    const now = this.clock.now().getTime();
    const bucket = this.bucket(address, now);
    bucket.tokens -= 1;
    this.buckets.delete(address);
    this.buckets.set(address, bucket);
    if (this.buckets.size > MAX_ADDRESSES) this.forget(now);
  }

  /** Forgets addresses whose allowance is full again, then the longest-quiet ones. */
  private forget(now: number): void {
    for (const [address] of this.buckets) {
      if (this.bucket(address, now).tokens >= this.options.failures) this.buckets.delete(address);
    }
    for (const [address] of this.buckets) {
      if (this.buckets.size <= MAX_ADDRESSES) break;
      this.buckets.delete(address);
    }
  }
}
