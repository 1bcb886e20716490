import type { ToolContext } from '../../src/tool/context.ts';
import { TOKEN_KIND, type DeepSourceSettings } from './settings.ts';
import { retryAfterMs, retrying, retryPolicy } from '../../src/tool/retry-policy.ts';

// DeepSource publishes no Node SDK (its CLI is Go), so this is a small GraphQL POST over fetch:
// `{query, variables}` to the endpoint with the agent's own token as a Bearer credential. Every
// operation the package sends is a query, so a rate limit, a 5xx or a dropped connection is
// retried here (a bounded number of times): asking again cannot change anything.

/** Attempts per operation, the first included. */
export const MAX_ATTEMPTS = 3;
/** Three attempts, 250 ms doubling; no wait exceeds 10 s, not even one DeepSource asked for. */
const RETRY = retryPolicy({ maxAttempts: MAX_ATTEMPTS, baseDelayMs: 250, maxDelayMs: 10_000 });
const TIMEOUT_MS = 30_000;

/**
 * Why an operation failed: `token` (DeepSource refused the token), `permission` (the token is
 * good, the account may not see this), `not_found` (DeepSource has no such object), `throttled`
 * and `unavailable` (retried, then given up), `refused` (any other error DeepSource answered).
 */
export type FailureKind =
  'token' | 'permission' | 'not_found' | 'throttled' | 'unavailable' | 'refused';

export class DeepSourceError extends Error {
  constructor(
    readonly kind: FailureKind,
    message: string,
    readonly attempts = 1,
  ) {
    super(message);
    this.name = 'DeepSourceError';
  }
}

/** One GraphQL query with the agent's token; resolves to `data`, or throws a DeepSourceError. */
export type Request = <Data>(query: string, variables: Record<string, unknown>) => Promise<Data>;

interface GraphqlBody {
  readonly data?: unknown;
  readonly errors?: ReadonlyArray<{ readonly message?: unknown }>;
}

const TOKEN_MESSAGES =
  /signature has expired|error decoding signature|invalid token|token (?:is )?(?:invalid|expired|revoked)|not authenticated|authentication credentials/i;

/** Classifies DeepSource's GraphQL `errors` (answered with HTTP 200) by their messages. */
function graphqlFailure(errors: NonNullable<GraphqlBody['errors']>): DeepSourceError {
  const messages = errors.map((e) => (typeof e.message === 'string' ? e.message : 'no message'));
  const message = messages.join('; ').slice(0, 300);
  if (messages.some((m) => TOKEN_MESSAGES.test(m))) return new DeepSourceError('token', message);
  if (messages.some((m) => /permission/i.test(m)))
    return new DeepSourceError('permission', message);
  if (messages.some((m) => /matching query does not exist/i.test(m)))
    return new DeepSourceError('not_found', message);
  return new DeepSourceError('refused', message);
}

/** A request function for one call, authenticated as the agent's own DeepSource account. */
export async function connect(ctx: ToolContext, settings: DeepSourceSettings): Promise<Request> {
  const token = await ctx.secret(TOKEN_KIND);
  const once = async <Data>(body: string): Promise<Data> => {
    let response: Response;
    try {
      response = await ctx.fetch(settings.apiUrl, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body,
        redirect: 'error',
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(TIMEOUT_MS)]),
      });
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      throw new RetryableError(
        new DeepSourceError('unavailable', 'DeepSource could not be reached'),
        undefined,
      );
    }
    const status = response.status;
    const text = await response.text();
    let parsed: GraphqlBody | undefined;
    try {
      parsed = JSON.parse(text) as GraphqlBody;
    } catch {
      parsed = undefined;
    }
    if (status === 429)
      throw new RetryableError(
        new DeepSourceError('throttled', 'DeepSource rate-limited the request (HTTP 429)'),
        retryAfterMs(response.headers),
      );
    if (status >= 500)
      throw new RetryableError(
        new DeepSourceError('unavailable', `DeepSource answered HTTP ${status}`),
        retryAfterMs(response.headers),
      );
    if (status === 401 || status === 403)
      throw new DeepSourceError('token', `DeepSource answered HTTP ${status}`);
    if (parsed?.errors !== undefined && parsed.errors.length > 0)
      throw graphqlFailure(parsed.errors);
    if (status !== 200 || parsed === undefined || parsed.data === undefined || parsed.data === null)
      throw new DeepSourceError('refused', `DeepSource answered HTTP ${status} without data`);
    return parsed.data as Data;
  };
  return async <Data>(query: string, variables: Record<string, unknown>) => {
    const body = JSON.stringify({ query, variables });
    return retrying(() => once<Data>(body), {
      policy: RETRY,
      signal: ctx.signal,
      judge: (error) =>
        error instanceof RetryableError
          ? error.retryAfterMs === undefined
            ? {}
            : { retryAfterMs: error.retryAfterMs }
          : undefined,
      giveUp: (error, attempts) => {
        const { failure } = error as RetryableError;
        return new DeepSourceError(failure.kind, failure.message, attempts);
      },
    });
  };
}

/** A failure worth asking again about, with the wait DeepSource asked for, if any. */
class RetryableError extends Error {
  constructor(
    readonly failure: DeepSourceError,
    readonly retryAfterMs: number | undefined,
  ) {
    super(failure.message);
  }
}

/** The observation for a token DeepSource refuses: names the fix, never the token. */
export const BAD_TOKEN_TEXT =
  `DeepSource refused this agent's access token. The operator needs to capture a valid ` +
  `${TOKEN_KIND} for this agent in its mesh.deepsource settings (a personal access token of the ` +
  `agent's own DeepSource account, from its user settings → Tokens); until then no DeepSource ` +
  `call can succeed.`;

/**
 * Text for a failed query. `what` says what was asked ("listing the issues of acme/api"), `where`
 * which object a not-found is about ("repository acme/api on GITHUB").
 */
export function failureText(what: string, where: string, error: unknown): string {
  if (!(error instanceof DeepSourceError))
    return `DeepSource could not be asked about ${what} (the request failed before an answer).`;
  switch (error.kind) {
    case 'token':
      return BAD_TOKEN_TEXT;
    case 'permission':
      return (
        `DeepSource refused ${what}: the agent's DeepSource account has no access to ${where} ` +
        `(${error.message}). Someone with access adds the agent's account to it, or the operator ` +
        `captures a ${TOKEN_KIND} of an account that has access.`
      );
    case 'not_found':
      return `DeepSource has no ${where} that the agent's account can see (${error.message}). Check the names, and the vcs_provider setting.`;
    case 'throttled':
    case 'unavailable':
      return `${error.message} while ${what}, ${error.attempts} attempts in all; try again later.`;
    case 'refused':
      return `DeepSource refused ${what}: ${error.message}.`;
  }
}
