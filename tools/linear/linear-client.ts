import { LinearClient } from '@linear/sdk';
import type { ToolContext } from '../../src/tool/context.ts';
import { DeliveryError } from '../../src/tool/outbound.ts';
import { API_KEY_KIND, type LinearSettings } from './settings.ts';

/** One GraphQL request with the agent's key, through the SDK's client (its errors, parsed). */
export type Request = <Data>(query: string, variables: Record<string, unknown>) => Promise<Data>;

/** A request function for one call, authenticated as the agent's own Linear account. */
export async function connect(ctx: ToolContext, settings: LinearSettings): Promise<Request> {
  const apiKey = await ctx.secret(API_KEY_KIND);
  const client = new LinearClient({ apiKey, apiUrl: settings.apiUrl, signal: ctx.signal });
  return async <Data>(query: string, variables: Record<string, unknown>) => {
    const response = await client.client.rawRequest<Data, Record<string, unknown>>(
      query,
      variables,
    );
    if (response.data === undefined) throw new Error('Linear answered without data');
    return response.data;
  };
}

/** The observation for a key Linear refuses: names the fix, never the key. */
export const BAD_KEY_TEXT =
  `Linear refused this agent's API key (authentication error). The operator needs to capture a ` +
  `valid ${API_KEY_KIND} for this agent in its mesh.linear settings (a personal API key of the ` +
  `agent's own Linear account); until then no Linear call can succeed.`;

interface LinearFailure {
  readonly type: string | undefined;
  readonly status: number | undefined;
  readonly message: string;
  readonly retryAfterS: number | undefined;
}

/** What an SDK error says, read by shape (a LinearError's `type` and `status`), never by class. */
export function linearFailure(error: unknown): LinearFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { type?: unknown; status?: unknown; message?: unknown; retryAfter?: unknown };
  if (typeof e.type !== 'string') return undefined;
  return {
    type: e.type,
    status: typeof e.status === 'number' ? e.status : undefined,
    message: typeof e.message === 'string' ? e.message.slice(0, 500) : 'no message',
    retryAfterS: typeof e.retryAfter === 'number' ? e.retryAfter : undefined,
  };
}

/** Text for a failed read (a query tool's observation). */
export function failureText(what: string, settings: LinearSettings, error: unknown): string {
  const failure = linearFailure(error);
  if (failure?.type === 'AuthenticationError') return BAD_KEY_TEXT;
  if (failure?.type === 'Forbidden')
    return `Linear answered ${what} with forbidden: the agent's Linear account lacks the permission (${failure.message}).`;
  if (failure) return `Linear answered ${what} with ${failure.type}: ${failure.message}.`;
  return `Linear at the configured api_url (${settings.apiUrl}) could not be reached for ${what}.`;
}

/**
 * What a failed Linear mutation means for its effect. Linear did not act on a refused key, a
 * permission, invalid input or a rate limit; a 5xx or a dropped connection may have acted, which
 * the effect's lookup by our id settles.
 */
export function deliveryError(
  what: string,
  settings: LinearSettings,
  error: unknown,
): DeliveryError {
  const failure = linearFailure(error);
  if (!failure)
    return new DeliveryError('ambiguous', failureText(what, settings, error), { cause: error });
  switch (failure.type) {
    case 'Ratelimited':
      return new DeliveryError('retriable', `Linear rate-limited ${what}`, {
        ...(failure.retryAfterS === undefined ? {} : { retryAfterMs: failure.retryAfterS * 1000 }),
      });
    case 'InternalError':
    case 'NetworkError':
    case 'LockTimeout':
    case 'Unknown':
      return new DeliveryError('ambiguous', `Linear answered ${what} with ${failure.type}`);
    default:
      return new DeliveryError('terminal', failureText(what, settings, error));
  }
}
