import { ERROR_CODES, familyOf, type ErrorCode, type ErrorFamily } from '../tool/error-codes.ts';

/**
 * The HTTP status each family of error codes is answered with. A failure that may pass
 * (`unavailable`, `handed_over`) is a 503 with `Retry-After`, not an opaque 500: a client, a load
 * balancer and an operator's retry loop all read it as "ask again later".
 */
const FAMILY_STATUS = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  not_supported: 405,
  conflict: 409,
  too_large: 413,
  unsupported_media: 415,
  rate_limited: 429,
  unavailable: 503,
  handed_over: 503,
  upstream: 502,
  upstream_transient: 502,
  internal: 500,
} as const satisfies Record<ErrorFamily, number>;

/** The status of every code, from its family: the compiler holds both tables complete. */
export const ERROR_STATUS: Readonly<Record<ErrorCode, number>> = Object.freeze(
  Object.fromEntries(
    Object.entries(ERROR_CODES).map(([code, family]) => [code, FAMILY_STATUS[family]]),
  ) as Record<ErrorCode, number>,
);

/** The HTTP status for `code`; 500 for a code the table does not know (a bug, not a refusal). */
export function httpStatusOf(code: string): number {
  return FAMILY_STATUS[familyOf(code)];
}

/**
 * Seconds a client should wait before asking again after a failure of `code`, when it may pass:
 * a database or backend that is down is usually back within seconds; a handed-over run is
 * resumed by a worker within a lease.
 */
export function retryAfterSeconds(code: string): number | undefined {
  switch (familyOf(code)) {
    case 'unavailable':
      return 5;
    case 'handed_over':
      return 10;
    case 'upstream_transient':
      return 5;
    default:
      return undefined;
  }
}
