import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import type { ToolContext } from '../../src/tool/context.ts';
import { DeliveryError } from '../../src/tool/outbound.ts';
import { CREDENTIAL_KIND, type GitHubSettings } from './settings.ts';

/** The GitHub account the package acts as: the agent's own user, or its app's bot. */
export interface GitHubIdentity {
  readonly login: string;
  readonly id: number;
  readonly name: string | null;
}

/** A client authenticated for one call, and the token it sends (for the workspace grant). */
export interface GitHubConnection {
  readonly octokit: Octokit;
  readonly token: string;
  readonly identity?: GitHubIdentity;
}

export type ConnectOutcome =
  | { readonly ok: true; readonly connection: GitHubConnection }
  | { readonly ok: false; readonly text: string };

/** What an HTTP failure from GitHub said. */
export interface HttpFailure {
  readonly status: number;
  /** GitHub's `message`, with the `message` of each entry of `errors` after it. */
  readonly message: string;
}

/** The status and GitHub's message of an octokit request error; undefined for anything else. */
export function httpFailure(error: unknown): HttpFailure | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const status = (error as { status?: unknown }).status;
  const response = (error as { response?: { data?: unknown } }).response;
  // Octokit reports a request that never got an answer (refused, reset, DNS) as a 500 without a
  // response: that is GitHub unreachable, not GitHub answering.
  if (typeof status !== 'number' || response === undefined) return undefined;
  const data = response.data;
  const parts: string[] = [];
  if (typeof data === 'object' && data !== null) {
    const body = data as { message?: unknown; errors?: unknown };
    if (typeof body.message === 'string') parts.push(body.message);
    if (Array.isArray(body.errors)) {
      for (const entry of body.errors as unknown[]) {
        const message =
          typeof entry === 'string'
            ? entry
            : typeof entry === 'object' && entry !== null
              ? (entry as { message?: unknown }).message
              : undefined;
        if (typeof message === 'string') parts.push(message);
      }
    }
  }
  if (parts.length === 0 && error instanceof Error) parts.push(error.message);
  return { status, message: parts.join(': ').slice(0, 1000) };
}

/** The observation for a token GitHub refuses: names the fix, never the token. */
export const BAD_CREDENTIAL_TEXT =
  `GitHub refused this agent's credential (401 Bad credentials). The operator needs to capture a valid ` +
  `${CREDENTIAL_KIND} for this agent in its mesh.github settings (the agent's own GitHub token, ` +
  `or its GitHub App's private key when auth_mode is app); until then no GitHub call can succeed.`;

/** The longest wait a rate limit may ask for and still be retried by the outbound machinery. */
const RETRYABLE_WAIT_MS = 10_000;

/**
 * How long GitHub asked to wait, when its answer was a rate limit: 429, or 403 with
 * `x-ratelimit-remaining: 0` (the primary limit, until `x-ratelimit-reset`) or with `retry-after`
 * (a secondary limit). GitHub says to wait a minute when it names no time. Undefined otherwise.
 */
export function rateLimitWaitMs(error: unknown): number | undefined {
  const failure = httpFailure(error);
  if (failure?.status !== 429 && failure?.status !== 403) return undefined;
  const headers =
    (error as { response?: { headers?: Record<string, unknown> } }).response?.headers ?? {};
  const header = (name: string) => {
    const value = headers[name];
    return typeof value === 'string' || typeof value === 'number' ? Number(value) : undefined;
  };
  const retryAfter = header('retry-after');
  const remaining = header('x-ratelimit-remaining');
  if (failure.status === 403 && retryAfter === undefined && remaining !== 0) return undefined;
  if (retryAfter !== undefined && Number.isFinite(retryAfter))
    return Math.max(0, retryAfter * 1000);
  const reset = header('x-ratelimit-reset');
  if (remaining === 0 && reset !== undefined && Number.isFinite(reset))
    return Math.max(0, reset * 1000 - Date.now());
  return 60_000;
}

function rateLimitText(what: string, waitMs: number): string {
  const seconds = Math.ceil(waitMs / 1000);
  return `GitHub rate-limited ${what} for this agent's account and asks to wait ${seconds} s; try again after that.`;
}

/** Text for a failure that is not one the caller handles itself. */
export function failureText(what: string, settings: GitHubSettings, error: unknown): string {
  const failure = httpFailure(error);
  if (failure?.status === 401) return BAD_CREDENTIAL_TEXT;
  const wait = rateLimitWaitMs(error);
  if (wait !== undefined) return rateLimitText(what, wait);
  if (failure?.status === 403)
    return `GitHub refused ${what} (403): ${failure.message || 'no message'}. This agent's account lacks the permission.`;
  if (failure)
    return `GitHub answered ${what} with ${failure.status}: ${failure.message || 'no message'}.`;
  const why = error instanceof Error ? ` (${error.message.slice(0, 200)})` : '';
  return `GitHub at the configured api_base_url (${settings.apiBaseUrl}) could not be reached for ${what}${why}.`;
}

/**
 * What a failed write means for its effect. GitHub did not act on a refused credential, a
 * permission, a missing repository, invalid input (4xx) or a rate limit; a 5xx or a request that
 * got no answer may have acted, which the effect's lookup by our marker settles.
 */
export function deliveryError(
  what: string,
  settings: GitHubSettings,
  error: unknown,
): DeliveryError {
  const failure = httpFailure(error);
  if (!failure)
    return new DeliveryError('ambiguous', failureText(what, settings, error), { cause: error });
  const wait = rateLimitWaitMs(error);
  if (wait !== undefined)
    return wait <= RETRYABLE_WAIT_MS
      ? new DeliveryError('retryable', `GitHub rate-limited ${what} (${failure.status})`, {
          retryAfterMs: wait,
        })
      : new DeliveryError('terminal', rateLimitText(what, wait));
  if (failure.status >= 500)
    return new DeliveryError('ambiguous', `GitHub answered ${what} with ${failure.status}`);
  if (failure.status === 404)
    return new DeliveryError(
      'terminal',
      `GitHub answered ${what} with 404 Not Found: the repository or number does not exist, or this agent's account cannot see it.`,
    );
  return new DeliveryError('terminal', failureText(what, settings, error));
}

/**
 * Runs a read, and once more when GitHub answered with a short rate limit (at most 2 s) or a
 * 502/503/504: a read is safe to repeat. Anything else is thrown as it came.
 */
export async function readRetrying<T>(signal: AbortSignal, read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    const wait = rateLimitWaitMs(error);
    const status = httpFailure(error)?.status ?? 0;
    const retry =
      wait !== undefined ? wait <= 2000 : status === 502 || status === 503 || status === 504;
    if (!retry || signal.aborted) throw error;
    await new Promise((resolve) => setTimeout(resolve, wait ?? 200));
    return read();
  }
}

/**
 * Octokit logs every failed request to the console; the handlers turn each into an observation
 * instead, so the log stays quiet.
 */
const QUIET_LOG = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

function client(
  settings: GitHubSettings,
  token: string,
  signal: AbortSignal,
  fetch: ToolContext['fetch'],
): Octokit {
  return new Octokit({
    baseUrl: settings.apiBaseUrl,
    auth: token,
    userAgent: 'mesh.github',
    log: QUIET_LOG,
    request: { fetch, signal },
  });
}

/**
 * Authenticates for one call. Token mode uses the agent's token as is; app mode signs an app JWT
 * with the captured private key and mints an installation token (valid for an hour: one call's,
 * and so one run's, worth). With `identity`, also reads who that credential is: `GET /user` for a
 * token (which is what proves it), `GET /app` and the bot user for an app.
 */
export async function connect(
  ctx: ToolContext,
  settings: GitHubSettings,
  options: { identity: boolean },
): Promise<ConnectOutcome> {
  const secret = await ctx.secret(CREDENTIAL_KIND);
  const auth = settings.auth;
  if (auth.mode === 'token') {
    const octokit = client(settings, secret, ctx.signal, ctx.fetch);
    if (!options.identity) return { ok: true, connection: { octokit, token: secret } };
    try {
      const { data } = await octokit.rest.users.getAuthenticated();
      return {
        ok: true,
        connection: {
          octokit,
          token: secret,
          identity: { login: data.login, id: data.id, name: data.name ?? null },
        },
      };
    } catch (error) {
      return { ok: false, text: failureText('the credential check (GET /user)', settings, error) };
    }
  }

  const app = new Octokit({
    baseUrl: settings.apiBaseUrl,
    authStrategy: createAppAuth,
    auth: { appId: auth.appId, privateKey: secret, installationId: auth.installationId },
    userAgent: 'mesh.github',
    log: QUIET_LOG,
    request: { fetch: ctx.fetch, signal: ctx.signal },
  });
  let token: string;
  try {
    const minted = (await app.auth({ type: 'installation' })) as { token?: unknown };
    if (typeof minted.token !== 'string') throw new Error('no token in the answer');
    token = minted.token;
  } catch (error) {
    const failure = httpFailure(error);
    const why = failure
      ? `${failure.status}: ${failure.message || 'no message'}`
      : 'the captured private key could not sign an app token, or GitHub could not be reached';
    return {
      ok: false,
      text:
        `GitHub did not mint an installation token for app ${auth.appId}, installation ` +
        `${auth.installationId} (${why}). Check the app_id and installation_id settings and that ` +
        `the captured ${CREDENTIAL_KIND} is the app's PEM private key.`,
    };
  }
  const octokit = client(settings, token, ctx.signal, ctx.fetch);
  if (!options.identity) return { ok: true, connection: { octokit, token } };
  try {
    const { data: meta } = await app.rest.apps.getAuthenticated();
    const slug = meta?.slug;
    if (typeof slug !== 'string') throw new Error('the app has no slug');
    const login = `${slug}[bot]`;
    const { data: bot } = await octokit.rest.users.getByUsername({ username: login });
    return {
      ok: true,
      connection: { octokit, token, identity: { login, id: bot.id, name: null } },
    };
  } catch (error) {
    return { ok: false, text: failureText("reading the app's identity", settings, error) };
  }
}
