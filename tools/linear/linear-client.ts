import { parseLinearError } from '@linear/sdk';
import type { ToolContext } from '../../src/tool/context.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { DeliveryError } from '../../src/tool/outbound.ts';
import { API_KEY_KIND, type LinearSettings } from './settings.ts';

/** One GraphQL request with the agent's key, its failures parsed into the SDK's error types. */
export type Request = <Data>(query: string, variables: Record<string, unknown>) => Promise<Data>;

const TIMEOUT_MS = 30_000;

/** A GraphQL answer as Linear sends it (`data`, or `errors` with Linear's extensions). */
interface GraphQLAnswer {
  readonly data?: unknown;
  readonly errors?: readonly { readonly message?: unknown }[];
}

/** The body read as the SDK's client reads it: JSON when it says so, text otherwise. */
async function readAnswer(response: Response): Promise<GraphQLAnswer | string> {
  const type = response.headers.get('content-type') ?? '';
  if (!/application\/(graphql-response\+)?json/i.test(type)) return response.text();
  const body: unknown = await response.json();
  return typeof body === 'object' && body !== null ? body : String(body);
}

/**
 * A request function for one call, authenticated as the agent's own Linear account. It is the
 * SDK's GraphQL request (POST `{query, variables}`, the key as `Authorization`) sent through the
 * control plane's guarded fetch: the SDK's client reads `globalThis.fetch` and takes no other
 * (decision 0030). A failure is handed to the SDK's own `parseLinearError`, so its error types
 * (`Ratelimited` with `retryAfter`, `AuthenticationError`, …) are what the handlers read.
 */
export async function connect(
  ctx: Pick<ToolContext, 'secret' | 'fetch' | 'signal'>,
  settings: LinearSettings,
): Promise<Request> {
  const apiKey = await ctx.secret(API_KEY_KIND);
  return async <Data>(query: string, variables: Record<string, unknown>) => {
    const response = await ctx.fetch(settings.apiUrl, {
      method: 'POST',
      // A redirect is Linear's answer, not something to follow with the key attached.
      redirect: 'manual',
      headers: { authorization: apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(TIMEOUT_MS)]),
    });
    const answer = await readAnswer(response);
    if (typeof answer !== 'string' && response.ok && !answer.errors && answer.data)
      return answer.data as Data;
    const first = typeof answer === 'string' ? undefined : answer.errors?.[0]?.message;
    const failure = Object.assign(
      new Error(typeof first === 'string' ? first : `GraphQL Error (Code: ${response.status})`),
      {
        response: {
          ...(typeof answer === 'string' ? { error: answer.slice(0, 500) } : answer),
          status: response.status,
          headers: response.headers,
        },
        request: { query, variables },
      },
    );
    throw parseLinearError(failure);
  };
}

/**
 * Reads one entity by id (`issue`, `comment`, `webhook`) with the fields given; undefined when
 * Linear has none the account can see (it answers an unknown id with an "Entity not found"
 * invalid-input error).
 */
export async function readById<T>(
  request: Request,
  entity: 'issue' | 'comment' | 'webhook',
  fields: string,
  id: string,
): Promise<T | undefined> {
  try {
    const data = await request<Record<string, T | null>>(
      `query MeshRead($id: String!) { ${entity}(id: $id) { ${fields} } }`,
      { id },
    );
    return data[entity] ?? undefined;
  } catch (error) {
    if (linearFailure(error)?.type === 'InvalidInput') return undefined;
    throw error;
  }
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
  // The egress policy's refusal names the address and why; nothing was sent.
  if (hasCode(error, 'egress_refused'))
    return `Linear at the configured api_url could not be reached for ${what}: ${(error as Error).message}.`;
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
  if (hasCode(error, 'egress_refused'))
    return new DeliveryError('terminal', failureText(what, settings, error));
  if (!failure)
    return new DeliveryError('ambiguous', failureText(what, settings, error), { cause: error });
  switch (failure.type) {
    case 'Ratelimited':
      return new DeliveryError('retryable', `Linear rate-limited ${what}`, {
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
