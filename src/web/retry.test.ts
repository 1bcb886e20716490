import { describe, expect, it } from 'vitest';
import { QueryProviderError } from './provider.ts';
import { withRetries, type RetryOptions } from './retry.ts';

/** Options whose waits are recorded, not slept. */
function recording(overrides: Partial<RetryOptions> = {}) {
  const waits: number[] = [];
  const attempts: number[] = [];
  const options: RetryOptions = {
    maxAttempts: 3,
    signal: new AbortController().signal,
    sleep: async (ms) => {
      waits.push(ms);
    },
    random: () => 1,
    onAttempt: (n) => attempts.push(n),
    ...overrides,
  };
  return { options, waits, attempts };
}

/** An attempt that fails with each of `failures` in turn, then answers 'ok'. */
function failing(...failures: Error[]) {
  const calls: number[] = [];
  return {
    calls,
    attempt: async (n: number) => {
      calls.push(n);
      const failure = failures[n - 1];
      if (failure !== undefined) throw failure;
      return 'ok';
    },
  };
}

const down = (message = 'exa answered HTTP 503') =>
  new QueryProviderError('provider_down', message);

describe('withRetries', () => {
  it('with maxAttempts 0 throws rate_limited with attempts 0 and makes no attempt', async () => {
    const { options, attempts } = recording({ maxAttempts: 0 });
    const { attempt, calls } = failing();
    await expect(withRetries(attempt, options)).rejects.toMatchObject({
      reason: 'rate_limited',
      attempts: 0,
      data: { reason: 'rate_limited', attempts: 0 },
    });
    expect(calls).toEqual([]);
    expect(attempts).toEqual([]);
  });

  it('retries a retryable failure, reporting every attempt before it is made', async () => {
    const { options, attempts, waits } = recording();
    const { attempt, calls } = failing(down());
    expect(await withRetries(attempt, options)).toBe('ok');
    expect(calls).toEqual([1, 2]);
    expect(attempts).toEqual([1, 2]);
    expect(waits).toHaveLength(1);
  });

  it('backs off with full jitter, the ceiling doubling per retry', async () => {
    const { options, waits } = recording({ maxAttempts: 4, baseDelayMs: 100 });
    await withRetries(failing(down(), down(), down()).attempt, options);
    expect(waits).toEqual([100, 200, 400]);

    const jittered = recording({ maxAttempts: 2, baseDelayMs: 100, random: () => 0.25 });
    await withRetries(failing(down()).attempt, jittered.options);
    expect(jittered.waits).toEqual([25]);
  });

  it("waits the provider's Retry-After instead, never longer than maxDelayMs", async () => {
    const asked = new QueryProviderError('rate_limited', 'brave is rate limiting', {
      retryAfterMs: 3_000,
    });
    const patient = recording({ maxDelayMs: 10_000 });
    await withRetries(failing(asked).attempt, patient.options);
    expect(patient.waits).toEqual([3_000]);

    const hurried = recording({ maxDelayMs: 500 });
    await withRetries(failing(asked).attempt, hurried.options);
    expect(hurried.waits).toEqual([500]);
  });

  it('throws the last failure with the number of attempts made', async () => {
    const { options } = recording();
    const { attempt, calls } = failing(down('first'), down('second'), down('third'), down());
    const error = await withRetries(attempt, options).catch((e: unknown) => e);
    expect(error).toMatchObject({ reason: 'provider_down', message: 'third', attempts: 3 });
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ data: { attempts: 3 } });
    expect(calls).toEqual([1, 2, 3]);
  });

  it.each(['bad_credential', 'bad_request', 'unreadable', 'unsupported'] as const)(
    'does not retry %s',
    async (reason) => {
      const { options, waits } = recording();
      const { attempt, calls } = failing(new QueryProviderError(reason, 'no'));
      await expect(withRetries(attempt, options)).rejects.toMatchObject({ reason, attempts: 1 });
      expect(calls).toEqual([1]);
      expect(waits).toEqual([]);
    },
  );

  it('passes anything else an attempt throws through unchanged, at once', async () => {
    const bug = new TypeError('a bug');
    const { attempt, calls } = failing(bug);
    await expect(withRetries(attempt, recording().options)).rejects.toBe(bug);
    expect(calls).toEqual([1]);
  });

  it('stops when onAttempt refuses an attempt (a per-run ceiling)', async () => {
    const ceiling = new Error('the run has made all its web calls');
    const { options } = recording({
      onAttempt: (n) => {
        if (n > 1) throw ceiling;
      },
    });
    const { attempt, calls } = failing(down(), down());
    await expect(withRetries(attempt, options)).rejects.toBe(ceiling);
    expect(calls).toEqual([1]);
  });

  it("rejects with the signal's reason once it aborts, making no further attempt", async () => {
    const controller = new AbortController();
    const reason = new Error('cancelled');
    const calls: number[] = [];
    const attempt = async (n: number) => {
      calls.push(n);
      controller.abort(reason);
      throw down();
    };
    // The default sleep: it returns at once on the abort, with the reason.
    await expect(withRetries(attempt, { maxAttempts: 3, signal: controller.signal })).rejects.toBe(
      reason,
    );
    expect(calls).toEqual([1]);
  });

  it.each([-1, 1.5, Number.NaN])('refuses maxAttempts %s', async (maxAttempts) => {
    await expect(
      withRetries(failing().attempt, recording({ maxAttempts }).options),
    ).rejects.toThrow('maxAttempts');
  });
});
