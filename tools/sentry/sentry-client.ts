import { hasCode } from '../../src/tool/errors.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import { DeliveryError } from '../../src/tool/outbound.ts';
import { TOKEN_KIND, type SentrySettings } from './settings.ts';

/**
 * Sentry's REST API (https://docs.sentry.io/api/) over `fetch`: Sentry publishes no Node SDK for
 * its management API (`@sentry/node` reports errors, it does not read or change issues). Every
 * request carries the agent's own token as `Authorization: Bearer <token>`.
 */

/** How one request ended, as a value: handlers decide what each case means for their call. */
export type SentryAnswer =
  | { readonly kind: 'ok'; readonly status: number; readonly body: unknown }
  /** Sentry answered with an error status; `detail` is its `{"detail": …}` (or field errors). */
  | {
      readonly kind: 'refused';
      readonly status: number;
      readonly detail: string;
      readonly retryAfterS: number | undefined;
    }
  /** No answer: the connection failed or dropped, timed out, or the body was not JSON. */
  | { readonly kind: 'unreachable'; readonly reason: string };

export type SentryRequest = (
  method: 'GET' | 'PUT',
  path: string,
  options?: { readonly params?: URLSearchParams; readonly body?: Record<string, unknown> },
) => Promise<SentryAnswer>;

const TIMEOUT_MS = 30_000;

/** The text of a Sentry error body: `{"detail": "…"}`, or DRF's `{"field": ["message"]}`. */
function errorDetail(body: unknown): string {
  if (typeof body !== 'object' || body === null) return 'no detail';
  const record = body as Record<string, unknown>;
  if (typeof record['detail'] === 'string') return record['detail'].slice(0, 300);
  const fields = Object.entries(record)
    .map(([field, messages]) =>
      Array.isArray(messages)
        ? `${field}: ${messages.filter((m) => typeof m === 'string').join(' ')}`
        : '',
    )
    .filter((line) => line !== '');
  return fields.length > 0 ? fields.join('; ').slice(0, 300) : 'no detail';
}

/** Retry-After in seconds (Sentry sends an integer); undefined when absent or a date. */
function retryAfter(header: string | null): number | undefined {
  if (header === null || !/^\d{1,6}$/.test(header.trim())) return undefined;
  return Number(header.trim());
}

/** A request function for one call, authenticated as the agent's own Sentry account. */
export async function connect(ctx: ToolContext, settings: SentrySettings): Promise<SentryRequest> {
  const token = await ctx.secret(TOKEN_KIND);
  return async (method, path, options = {}) => {
    const query =
      options.params && [...options.params].length > 0 ? `?${options.params.toString()}` : '';
    let response: Response;
    let text: string;
    try {
      response = await ctx.fetch(`${settings.apiUrl}${path}${query}`, {
        method,
        // A redirect is Sentry's answer, not something to follow with the token attached.
        redirect: 'manual',
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(TIMEOUT_MS)]),
      });
      text = await response.text();
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      // The egress policy's refusal names the address and why; nothing was sent.
      if (hasCode(error, 'egress_refused'))
        return { kind: 'unreachable', reason: (error as Error).message };
      return { kind: 'unreachable', reason: 'the connection failed or the answer was lost' };
    }
    let body: unknown;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (response.ok) {
      return body === undefined
        ? {
            kind: 'unreachable',
            reason: `Sentry answered HTTP ${response.status} with a body that is not JSON`,
          }
        : { kind: 'ok', status: response.status, body };
    }
    return {
      kind: 'refused',
      status: response.status,
      detail: errorDetail(body),
      retryAfterS: retryAfter(response.headers.get('retry-after')),
    };
  };
}

/** The observation for a token Sentry refuses: names the fix, never the token. */
export const BAD_TOKEN_TEXT =
  `Sentry refused this agent's auth token (401). The operator needs to capture a valid ` +
  `${TOKEN_KIND} for this agent in its mesh.sentry settings (a user auth token of the agent's ` +
  `own Sentry account, or an internal integration's token); until then no Sentry call can succeed.`;

type Failure = Exclude<SentryAnswer, { kind: 'ok' }>;

/**
 * Text for a failed request. `subject` names what a 404 means was not found (`issue PROJ-12 in
 * organization acme`), so the model knows which identifier to check.
 */
export function failureText(
  what: string,
  subject: string,
  settings: SentrySettings,
  failure: Failure,
): string {
  if (failure.kind === 'unreachable')
    return `Sentry at the configured api_url (${settings.apiUrl}) could not be reached for ${what}: ${failure.reason}.`;
  switch (failure.status) {
    case 401:
      return BAD_TOKEN_TEXT;
    case 403:
      return (
        `Sentry refused ${what} (403: ${failure.detail}): the agent's token lacks the scope it ` +
        `needs (event:read to read issues; event:write or event:admin to change them), or the ` +
        `agent's account has no access to that project.`
      );
    case 404:
      return `Sentry has no ${subject} that this agent's account can see (404).`;
    case 429:
      return `Sentry rate-limited ${what}${failure.retryAfterS === undefined ? '' : `; try again in ${failure.retryAfterS} s`}.`;
    default:
      return `Sentry answered ${what} with HTTP ${failure.status}: ${failure.detail}.`;
  }
}

/**
 * What a failed change means for its effect. Sentry did not act on a refused token, a missing
 * scope, an unknown issue, invalid input or a rate limit; a 5xx or a lost answer may have acted,
 * which the effect's lookup (reading the issue back) settles.
 */
export function deliveryError(
  what: string,
  subject: string,
  settings: SentrySettings,
  failure: Failure,
): DeliveryError {
  const text = failureText(what, subject, settings, failure);
  if (failure.kind === 'unreachable') return new DeliveryError('ambiguous', text);
  if (failure.status === 429)
    return new DeliveryError('retryable', text, {
      ...(failure.retryAfterS === undefined ? {} : { retryAfterMs: failure.retryAfterS * 1000 }),
    });
  if (failure.status >= 500) return new DeliveryError('ambiguous', text);
  return new DeliveryError('terminal', text);
}
