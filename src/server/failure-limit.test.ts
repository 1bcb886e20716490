import { describe, expect, it } from 'vitest';
import { manualClock } from '../tool/clock.ts';
import { hasCode } from '../tool/errors.ts';
import { FailureLimiter } from './failure-limit.ts';
import { headersOf } from './http-error.ts';

function refusal(check: () => void): { seconds: number } | undefined {
  try {
    check();
    return undefined;
  } catch (error) {
    if (!hasCode(error, 'rate_limited')) throw error;
    return { seconds: Number(headersOf(error)['retry-after']) };
  }
}

describe('the failed sign-in limit', () => {
  it('allows the configured failures, then refuses until a token comes back', () => {
    const clock = manualClock(new Date(1_000_000));
    const limiter = new FailureLimiter(clock, { failures: 3, perMs: 30_000 });
    for (let i = 0; i < 3; i++) {
      expect(refusal(() => limiter.check('a'))).toBeUndefined();
      limiter.fail('a');
    }
    expect(refusal(() => limiter.check('a'))).toEqual({ seconds: 10 });
    expect(refusal(() => limiter.check('b'))).toBeUndefined();
    clock.advance(9_000);
    expect(refusal(() => limiter.check('a'))).toEqual({ seconds: 1 });
    clock.advance(1_000);
    expect(refusal(() => limiter.check('a'))).toBeUndefined();
    limiter.fail('a');
    expect(refusal(() => limiter.check('a'))).toEqual({ seconds: 10 });
    // A quiet address is back to its whole allowance, never more.
    clock.advance(10 * 60_000);
    for (let i = 0; i < 3; i++) limiter.fail('a');
    expect(refusal(() => limiter.check('a'))).toEqual({ seconds: 10 });
  });

  it('remembers a bounded number of addresses', () => {
    const clock = manualClock(new Date(0));
    const limiter = new FailureLimiter(clock, { failures: 1, perMs: 60_000 });
    for (let i = 0; i < 10_050; i++) limiter.fail(`10.0.${i >> 8}.${i & 255}`);
    const limited = [0, 10_049].map((i) =>
      refusal(() => limiter.check(`10.0.${i >> 8}.${i & 255}`)),
    );
    // The oldest was forgotten to make room; the newest is still held.
    expect(limited[0]).toBeUndefined();
    expect(limited[1]).toBeDefined();
  });
});
