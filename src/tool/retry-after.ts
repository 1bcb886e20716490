import { systemClock, type Clock } from './clock.ts';

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
