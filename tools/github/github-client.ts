import { createAppAuth } from '@octokit/auth-app';
import { Octokit } from '@octokit/rest';
import type { ToolContext } from '../../src/tool/context.ts';
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

/** Text for a failure that is not one the caller handles itself. */
export function failureText(what: string, settings: GitHubSettings, error: unknown): string {
  const failure = httpFailure(error);
  if (failure?.status === 401) return BAD_CREDENTIAL_TEXT;
  if (failure)
    return `GitHub answered ${what} with ${failure.status}: ${failure.message || 'no message'}.`;
  const why = error instanceof Error ? ` (${error.message.slice(0, 200)})` : '';
  return `GitHub at the configured api_base_url (${settings.apiBaseUrl}) could not be reached for ${what}${why}.`;
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

function client(settings: GitHubSettings, token: string, signal: AbortSignal): Octokit {
  return new Octokit({
    baseUrl: settings.apiBaseUrl,
    auth: token,
    userAgent: 'mesh.github',
    log: QUIET_LOG,
    request: { fetch: globalThis.fetch, signal },
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
    const octokit = client(settings, secret, ctx.signal);
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
    request: { fetch: globalThis.fetch, signal: ctx.signal },
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
  const octokit = client(settings, token, ctx.signal);
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
