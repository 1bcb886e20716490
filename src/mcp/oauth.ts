import { timingSafeEqual } from 'node:crypto';
import {
  auth,
  discoverOAuthServerInfo,
  OAuthError as SdkOAuthError,
  type OAuthDiscoveryState,
} from '@modelcontextprotocol/client';
import { isMeshError } from '../tool/errors.ts';
import { systemClock } from '../tool/clock.ts';

/**
 * OAuth 2.1 for remote MCP servers: authorization code with PKCE S256, protected-resource metadata
 * discovery (RFC 9728), the `resource` indicator (RFC 8707) and refresh. The SDK's `auth()` does
 * the protocol; this module decides what to refuse, keeps the state storage-agnostic, and makes
 * every failure a {@link McpOAuthError} whose message holds no secret.
 */

import {
  McpOAuthError,
  REFRESH_MARGIN_MS,
  type OAuthFailure,
  type OAuthFlowOptions,
  type OAuthState,
  type OAuthStateStore,
  type OAuthTokenState,
} from './oauth-state.ts';
import {
  checkDiscovery,
  type Watch,
  makeProvider,
  refreshRefused,
  update,
  withoutPending,
} from './oauth-provider.ts';

export { oauthProvider } from './oauth-provider.ts';

/** Every value in reach that must not appear in a message. */
async function secretsOf(options: OAuthFlowOptions, extra: readonly string[]): Promise<string[]> {
  const state = await options.store.load().catch((): OAuthState => ({}));
  const clients = [options.preRegistered, state.client].map((client) => {
    const id = client?.['client_id'];
    const secret = client?.['client_secret'];
    return typeof id === 'string' && typeof secret === 'string' ? { id, secret } : undefined;
  });
  return [
    ...extra,
    state.tokens?.access_token,
    state.tokens?.refresh_token,
    state.codeVerifier,
    state.pendingState,
    // The secret, and the same as it travels in a Basic authorization header.
    ...clients.flatMap((c) =>
      c ? [c.secret, Buffer.from(`${c.id}:${c.secret}`).toString('base64')] : [],
    ),
  ].filter((s): s is string => s !== undefined && s.length >= 4);
}

function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('[redacted]');
  return out.length > 300 ? `${out.slice(0, 300)}…` : out;
}

/** Runs one SDK step; a foreign failure becomes an {@link McpOAuthError} with a redacted message. */
async function step<T>(
  options: OAuthFlowOptions,
  reason: OAuthFailure,
  doing: string,
  run: () => Promise<T>,
  extraSecrets: readonly string[] = [],
): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (isMeshError(error)) throw error;
    const detail =
      error instanceof SdkOAuthError
        ? `${error.code}${error.message && error.message !== error.code ? ` (${error.message})` : ''}`
        : error instanceof Error
          ? error.message
          : 'unknown failure';
    const secrets = await secretsOf(options, extraSecrets);
    throw new McpOAuthError(reason, `${doing} failed: ${redact(detail, secrets)}`);
  }
}

/**
 * Starts an authorization: discovers the authorization server from the MCP server's protected
 * resource metadata, checks it (PKCE S256, resource), registers a client when there is none, and
 * saves the PKCE verifier and `state`. Returns the URL to send the operator's browser to.
 */
export async function beginAuthorization(
  options: OAuthFlowOptions & {
    /** Scope to ask for: the challenge's, else the metadata's `scopes_supported`, else none. */
    readonly scope?: string;
    /** The `resource_metadata` URL of a `WWW-Authenticate` challenge, when one gave it. */
    readonly resourceMetadataUrl?: string | URL;
  },
): Promise<{ authorizationUrl: URL }> {
  const { serverUrl, store, fetch } = options;
  const resourceMetadataUrl =
    options.resourceMetadataUrl === undefined ? undefined : new URL(options.resourceMetadataUrl);
  const info = await step(options, 'discovery_failed', 'discovery', () =>
    discoverOAuthServerInfo(serverUrl, {
      fetchFn: fetch,
      ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
    }),
  );
  const discovery: OAuthDiscoveryState = {
    ...info,
    ...(resourceMetadataUrl ? { resourceMetadataUrl: resourceMetadataUrl.href } : {}),
  };
  checkDiscovery(discovery, serverUrl);
  await update(store, (s) => ({ ...withoutPending(s), discovery }));

  let authorizationUrl: URL | undefined;
  const provider = makeProvider(
    {
      ...options,
      onRedirect: (url) => {
        authorizationUrl = url;
      },
    },
    'interactive',
    serverUrl,
  );
  await step(options, 'authorization_failed', 'starting the authorization', () =>
    auth(provider, {
      serverUrl,
      fetchFn: fetch,
      forceReauthorization: true,
      ...(options.scope ? { scope: options.scope } : {}),
      ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}),
    }),
  );
  if (!authorizationUrl)
    throw new McpOAuthError(
      'authorization_failed',
      'the flow did not produce an authorization URL',
    );
  return { authorizationUrl };
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Completes an authorization from the redirect's `code` and `state`: refuses a `state` that is
 * not the pending one, exchanges the code (with the verifier and `resource`), saves the tokens
 * and clears the pending authorization.
 */
export async function finishAuthorization(
  options: OAuthFlowOptions & {
    readonly code: string;
    readonly state: string;
    /** The redirect's `iss` parameter (RFC 9207), when it had one. */
    readonly iss?: string;
  },
): Promise<void> {
  const { serverUrl, store, fetch, code } = options;
  const pending = await store.load();
  if (pending.pendingState === undefined || pending.codeVerifier === undefined)
    throw new McpOAuthError('no_pending_authorization', 'no authorization is pending');
  if (!sameString(options.state, pending.pendingState))
    throw new McpOAuthError(
      'state_mismatch',
      'the authorization response does not belong to the pending authorization (state mismatch)',
    );
  const provider = makeProvider(options, 'plain', serverUrl);
  await step(
    options,
    'token_exchange_failed',
    'exchanging the authorization code',
    () =>
      auth(provider, {
        serverUrl,
        authorizationCode: code,
        fetchFn: fetch,
        ...(options.iss === undefined ? {} : { iss: options.iss }),
      }),
    [code, options.state],
  );
  await update(store, withoutPending);
}

const refreshing = new WeakMap<OAuthStateStore, Promise<string | undefined>>();

async function refresh(options: OAuthFlowOptions): Promise<string | undefined> {
  const current = (await options.store.load()).tokens;
  // Another caller may have refreshed while this one waited.
  if (current === undefined) return undefined;
  const now = (options.clock ?? systemClock).now().getTime();
  if (!expiring(current, now)) return current.access_token;
  const stillValid = current.expires_at !== undefined && current.expires_at > now;
  if (current.refresh_token === undefined) {
    if (stillValid) return current.access_token;
    throw new McpOAuthError(
      'authorization_required',
      'the access token expired and there is no refresh token; authorize again',
    );
  }
  const watch: Watch = { tokensInvalidated: false };
  const provider = makeProvider(options, 'refresh', options.serverUrl, watch);
  try {
    await step(options, 'refresh_failed', 'refreshing the access token', () =>
      auth(provider, { serverUrl: options.serverUrl, fetchFn: options.fetch }),
    );
  } catch (error) {
    // The server refused the grant (or the client): the tokens are gone, whatever came after.
    if (watch.tokensInvalidated) throw refreshRefused();
    // Refreshing early is a courtesy: a token that has not expired yet still serves meanwhile.
    if (stillValid) return current.access_token;
    throw error;
  }
  return (await options.store.load()).tokens?.access_token;
}

function expiring(tokens: OAuthTokenState, now: number): boolean {
  return tokens.expires_at !== undefined && tokens.expires_at - now <= REFRESH_MARGIN_MS;
}

/**
 * The current access token, refreshed first (with the refresh token and `resource`) when it has
 * expired or expires within {@link REFRESH_MARGIN_MS}; undefined when there is none. Concurrent
 * calls with the same store share one refresh, and a store with `exclusive` serializes refreshes
 * across processes too (a rotated refresh token is used once).
 */
export async function accessToken(options: OAuthFlowOptions): Promise<string | undefined> {
  const tokens = (await options.store.load()).tokens;
  if (tokens === undefined) return undefined;
  if (!expiring(tokens, (options.clock ?? systemClock).now().getTime())) return tokens.access_token;
  let pending = refreshing.get(options.store);
  if (pending === undefined) {
    const { store } = options;
    pending = (
      store.exclusive
        ? store.exclusive((locked) => refresh({ ...options, store: locked }))
        : refresh(options)
    ).finally(() => refreshing.delete(store));
    refreshing.set(options.store, pending);
  }
  return pending;
}
