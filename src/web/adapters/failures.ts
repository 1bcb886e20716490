import {
  QueryProviderError,
  type QueryProviderFailure,
  type QueryProviderKind,
} from '../provider.ts';

/*
 * How a provider's answer becomes a QueryProviderError. Messages name the provider, the status
 * and the provider's error code, never a value: no key, no query, no URL, and no text of the
 * provider's own (an error body may quote the request, headers included).
 */

/** The reason an HTTP status means when the provider documents nothing more specific. */
export function reasonForStatus(status: number): QueryProviderFailure {
  if (status === 401 || status === 403) return 'bad_credential';
  if (status === 429) return 'rate_limited';
  if (status >= 400 && status < 500) return 'bad_request';
  // 5xx, and a redirect (never followed: only the configured base URL is contacted).
  return 'provider_down';
}

/**
 * A provider's error code when it looks like one (`SUBSCRIPTION_TOKEN_INVALID`, `10000`), so it
 * can be named in a message; anything else (a sentence, a quoted value) is dropped.
 */
export function errorCodeOf(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isInteger(value)) return String(value);
  return typeof value === 'string' && /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/.test(value)
    ? value
    : undefined;
}

/** The error for a provider's non-2xx answer. */
export function statusFailure(
  kind: QueryProviderKind,
  reason: QueryProviderFailure,
  status: number,
  code: string | undefined,
  retryAfterMs?: number,
): QueryProviderError {
  const detail = code === undefined ? `HTTP ${status}` : `HTTP ${status}, ${code}`;
  return new QueryProviderError(reason, `${kind} ${REFUSAL[reason]} (${detail})`, {
    status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

const REFUSAL: Readonly<Record<QueryProviderFailure, string>> = {
  bad_credential: 'refused the API key',
  rate_limited: 'is rate limiting or out of quota',
  provider_down: 'failed',
  bad_request: 'refused the request',
  unreadable: 'could not read that page',
  unsupported: 'does not support that request',
};

/**
 * The error for a request that got no answer: the system error code (`ECONNREFUSED`,
 * `UND_ERR_SOCKET`) is named, the error itself not kept, since its text names addresses.
 */
export function unreachable(kind: QueryProviderKind, error: unknown): QueryProviderError {
  const cause = error instanceof Error ? error.cause : undefined;
  const code =
    typeof cause === 'object' && cause !== null && 'code' in cause ? cause.code : undefined;
  const named = typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code) ? ` (${code})` : '';
  return new QueryProviderError('provider_down', `${kind} could not be reached${named}`);
}

/** The error for a 2xx answer that is not the provider's documented shape. */
export function malformed(kind: QueryProviderKind, status = 200): QueryProviderError {
  return new QueryProviderError(
    'provider_down',
    `${kind} answered with a body that is not its documented shape`,
    { status },
  );
}

/** The error for a page the provider says it could not read; no answer, just that it failed. */
export function unreadablePage(kind: QueryProviderKind, code?: string): QueryProviderError {
  const detail = code === undefined ? '' : ` (${code})`;
  return new QueryProviderError('unreadable', `${kind} could not read that page${detail}`);
}
