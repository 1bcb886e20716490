import { HttpError } from '../http-error.ts';

/** The longest a caller may hold a request open for its run to settle. */
export const MAX_WAIT_S = 120;

/** How long a caller asked to wait, and how it asked. */
export interface WaitRequest {
  readonly seconds: number;
  /** `prefer` when it came in a `Prefer: wait=N` header: the answer says it was applied. */
  readonly from: 'none' | 'query' | 'prefer';
}

/**
 * `?wait=SECONDS` (a whole number up to {@link MAX_WAIT_S}; more is refused, naming the bound)
 * or `Prefer: wait=N` (RFC 7240: a hint, so a longer wait is cut to the bound and a malformed one
 * ignored). The query wins when both are given.
 */
export function waitOf(query: URLSearchParams, prefer: string | undefined): WaitRequest {
  const raw = query.get('wait');
  if (raw !== null) {
    const n = /^[0-9]{1,6}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!(n <= MAX_WAIT_S))
      throw new HttpError(
        'invalid_query',
        `wait must be a whole number of seconds from 0 to ${MAX_WAIT_S}`,
        {},
        { field: 'query.wait' },
      );
    return { seconds: n, from: 'query' };
  }
  for (const preference of (prefer ?? '').split(',')) {
    const match = /^\s*wait\s*=\s*"?([0-9]{1,9})"?\s*(;.*)?$/i.exec(preference);
    if (match) return { seconds: Math.min(Number(match[1]), MAX_WAIT_S), from: 'prefer' };
  }
  return { seconds: 0, from: 'none' };
}
