import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { manualClock } from '../tool/clock.ts';
import { hasCode } from '../tool/errors.ts';
import { backoffDelayMs, retryAfterMs, retrying, retryPolicy, sleep } from './retry-policy.ts';

const headers = (entries: Record<string, string>) => new Headers(entries);

describe('retryAfterMs', () => {
  const now = manualClock(new Date('2026-01-01T00:00:00Z'));

  it('reads delta-seconds, HTTP dates and retry-after-ms', () => {
    expect(retryAfterMs(headers({ 'retry-after': '7' }), now)).toBe(7_000);
    expect(retryAfterMs(headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toBe(
      30_000,
    );
    expect(retryAfterMs(headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250);
  });

  it('reads a date in the past as now and refuses what it cannot parse', () => {
    expect(retryAfterMs(headers({ 'retry-after': 'Wed, 31 Dec 2025 23:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(headers({ 'retry-after': 'soon' }), now)).toBeUndefined();
    expect(retryAfterMs(headers({ 'retry-after': '-5' }), now)).toBeUndefined();
    expect(retryAfterMs(headers({}), now)).toBeUndefined();
    expect(retryAfterMs(undefined, now)).toBeUndefined();
  });

  it('measures an HTTP date from the clock it is given: the wait shrinks as the clock moves', () => {
    const clock = manualClock(new Date('2026-01-01T00:00:00Z'));
    const until = headers({ 'retry-after': 'Thu, 01 Jan 2026 00:01:00 GMT' });
    expect(retryAfterMs(until, clock)).toBe(60_000);
    clock.advance(45_000);
    expect(retryAfterMs(until, clock)).toBe(15_000);
    clock.advance(15_000);
    expect(retryAfterMs(until, clock)).toBe(0);
    clock.advance(60_000);
    expect(retryAfterMs(until, clock)).toBe(0);
    // Delta-seconds are relative already: the clock does not move them.
    expect(retryAfterMs(headers({ 'retry-after': '7' }), clock)).toBe(7_000);
  });

  it('never throws and never returns a negative wait', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        let parsed: number | undefined;
        try {
          parsed = retryAfterMs(headers({ 'retry-after': value }), now);
        } catch {
          return; // Headers refuses values with control characters; not ours to parse.
        }
        expect(parsed === undefined || parsed >= 0).toBe(true);
      }),
    );
  });
});

describe('backoffDelayMs', () => {
  it('stays within the doubling ceiling and the cap', () => {
    const policy = retryPolicy({ baseDelayMs: 100, maxDelayMs: 1_000 });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (retry, r) => {
          const delay = backoffDelayMs(policy, retry, () => r);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(Math.min(1_000, 100 * 2 ** (retry - 1)));
        },
      ),
    );
    expect(backoffDelayMs(policy, 3, () => 1)).toBe(400);
  });
});

describe('retryPolicy', () => {
  it('fills in defaults and refuses a policy that cannot work, naming each field', () => {
    expect(retryPolicy({ maxAttempts: 2 })).toEqual({
      maxAttempts: 2,
      baseDelayMs: 500,
      maxDelayMs: 30_000,
    });
    let error: unknown;
    try {
      retryPolicy({ maxAttempts: 0, maxDelayMs: -1 });
    } catch (e) {
      error = e;
    }
    expect(hasCode(error, 'invalid_retry_policy')).toBe(true);
    expect((error as Error).message).toContain('maxAttempts');
    expect((error as Error).message).toContain('maxDelayMs');
  });
});

describe('sleep', () => {
  it('rejects with the abort reason, before and during the wait', async () => {
    const reason = new Error('stop');
    await expect(sleep(10, AbortSignal.abort(reason))).rejects.toBe(reason);
    const controller = new AbortController();
    const waiting = sleep(60_000, controller.signal);
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });
});

describe('retrying', () => {
  const policy = retryPolicy({ maxAttempts: 3, baseDelayMs: 100, maxDelayMs: 1_000 });
  class Busy extends Error {
    constructor(readonly retryAfterMs?: number) {
      super('busy');
    }
  }
  const judge = (error: unknown) =>
    error instanceof Busy
      ? error.retryAfterMs === undefined
        ? {}
        : { retryAfterMs: error.retryAfterMs }
      : undefined;

  function recorder() {
    const waits: number[] = [];
    return { waits, sleep: async (ms: number) => void waits.push(ms) };
  }

  it("waits the backoff, or the server's wait capped, and succeeds when an attempt does", async () => {
    const { waits, sleep } = recorder();
    const failures = [new Busy(5_000), new Busy()];
    const seen: [number, number][] = [];
    const answer = await retrying(
      async (n) => {
        const failure = failures[n - 1];
        if (failure) throw failure;
        return `ok after ${n}`;
      },
      {
        policy,
        signal: new AbortController().signal,
        judge,
        sleep,
        random: () => 1,
        onAttempt: (n, delayMs) => seen.push([n, delayMs]),
      },
    );
    expect(answer).toBe('ok after 3');
    // 5 s asked for, capped at 1 s; then the second retry's ceiling, 100 ms doubled.
    expect(waits).toEqual([1_000, 200]);
    expect(seen).toEqual([
      [1, 0],
      [2, 1_000],
      [3, 200],
    ]);
  });

  it('rethrows a failure it may not retry at once, and gives up after the last attempt', async () => {
    const { waits, sleep } = recorder();
    const signal = new AbortController().signal;
    const final = new Error('bad request');
    await expect(
      retrying(() => Promise.reject(final), { policy, signal, judge, sleep }),
    ).rejects.toBe(final);
    expect(waits).toEqual([]);
    let attempts = 0;
    await expect(
      retrying(
        () => {
          attempts++;
          return Promise.reject(new Busy());
        },
        { policy, signal, judge, sleep, giveUp: (_e, n) => new Error(`gave up after ${n}`) },
      ),
    ).rejects.toThrow('gave up after 3');
    expect(attempts).toBe(3);
  });

  it('lets an attempt hook refuse an attempt, and stops with the signal’s reason', async () => {
    const signal = new AbortController().signal;
    const { sleep } = recorder();
    const refused = new Error('ceiling reached');
    let attempts = 0;
    await expect(
      retrying(
        () => {
          attempts++;
          return Promise.reject(new Busy());
        },
        {
          policy,
          signal,
          judge,
          sleep,
          onAttempt: (n) => {
            if (n === 2) throw refused;
          },
        },
      ),
    ).rejects.toBe(refused);
    expect(attempts).toBe(1);
    const controller = new AbortController();
    const reason = new Error('run stopped');
    await expect(
      retrying(
        () => {
          controller.abort(reason);
          return Promise.reject(new Busy());
        },
        { policy, signal: controller.signal, judge },
      ),
    ).rejects.toBe(reason);
  });
});
