import { retryAfterMs } from '../../tool/retry-policy.ts';
import type { JsonValue } from '../../model/json.ts';
import { EgressRefusedError } from '../../egress/address-policy.ts';
import type { Clock } from '../../tool/clock.ts';
import { hasCode } from '../../tool/errors.ts';
import {
  QueryProviderError,
  type HttpFetch,
  type QueryProviderFailure,
  type QueryProviderKind,
} from '../provider.ts';
import { errorCodeOf, malformed, reasonForStatus, statusFailure, unreachable } from './failures.ts';

/**
 * Runs one provider request under `timeoutMs` and the caller's `signal`. `run` gets a signal
 * that aborts on either (fetch stops there), and the wait stops then even if `run` has not. The
 * caller's abort rejects with the signal's reason, unchanged; the timeout is `provider_down`.
 * Anything else `run` throws is passed on.
 */
export async function withDeadline<T>(
  kind: QueryProviderKind,
  timeoutMs: number,
  signal: AbortSignal,
  run: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  signal.throwIfAborted();
  const timeout = AbortSignal.timeout(timeoutMs);
  const either = AbortSignal.any([signal, timeout]);
  let stop: () => void = () => undefined;
  const stopped = new Promise<never>((_, reject) => {
    stop = () => reject(either.reason as Error);
    either.addEventListener('abort', stop, { once: true });
  });
  const work = run(either);
  // A request that cannot be cancelled may still fail after the wait stopped: not unhandled.
  work.catch(() => undefined);
  stopped.catch(() => undefined);
  try {
    return await Promise.race([work, stopped]);
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (timeout.aborted) {
      throw new QueryProviderError(
        'provider_down',
        `${kind} did not answer within ${timeoutMs} ms`,
      );
    }
    throw error;
  } finally {
    either.removeEventListener('abort', stop);
  }
}

/** One JSON request to a provider's documented HTTP API. */
export interface JsonRequest {
  readonly kind: QueryProviderKind;
  readonly method: 'GET' | 'POST';
  readonly url: string;
  /** The credential header and any the vendor requires; Accept and Content-Type are added. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: JsonValue;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** What a Retry-After HTTP date is measured against. */
  readonly clock: Clock;
  /** The guarded fetch the request is sent with. */
  readonly fetch: HttpFetch;
  /** Reads the vendor's error code from an error body, to name it and to classify by it. */
  readonly errorCode?: (body: unknown) => unknown;
  /** The vendor's own meaning of a status and code, where it differs from the HTTP default. */
  readonly classify?: (
    status: number,
    code: string | undefined,
  ) => QueryProviderFailure | undefined;
}

/** A 2xx answer's status and parsed body. */
export interface JsonAnswer {
  readonly status: number;
  readonly body: unknown;
}

/**
 * Sends `request` with the guarded fetch it carries and returns the 2xx answer's JSON. Redirects
 * are not followed (only the configured base URL is contacted); an address the egress policy
 * refuses is a `bad_request` naming it, never retried; every other outcome is a
 * QueryProviderError: see failures.ts for the table.
 */
export async function sendJson(request: JsonRequest): Promise<JsonAnswer> {
  const { kind } = request;
  return withDeadline(kind, request.timeoutMs, request.signal, async (signal) => {
    const headers: Record<string, string> = { ...request.headers, accept: 'application/json' };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    try {
      response = await request.fetch(request.url, {
        method: request.method,
        headers,
        ...(request.body === undefined ? {} : { body: JSON.stringify(request.body) }),
        redirect: 'manual',
        signal,
      });
    } catch (error) {
      if (hasCode(error, EgressRefusedError.code))
        throw new QueryProviderError('bad_request', `${kind}: ${(error as Error).message}`);
      throw unreachable(kind, error);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      throw unreachable(kind, error);
    }
    const body = parseJson(text);
    const { status } = response;
    if (status >= 200 && status < 300) {
      if (body === NOT_JSON) throw malformed(kind, status);
      return { status, body };
    }
    const code = body === NOT_JSON ? undefined : errorCodeOf(request.errorCode?.(body));
    const reason = request.classify?.(status, code) ?? reasonForStatus(status);
    const wait =
      reason === 'rate_limited' || reason === 'provider_down'
        ? retryAfterMs(response.headers, request.clock)
        : undefined;
    throw statusFailure(kind, reason, status, code, wait);
  });
}

const NOT_JSON = Symbol('not JSON');

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return NOT_JSON;
  }
}
