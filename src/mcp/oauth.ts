import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  auth,
  checkResourceAllowed,
  discoverOAuthServerInfo,
  OAuthError as SdkOAuthError,
  resourceUrlFromServerUrl,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
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
  type OAuthProviderOptions,
  type OAuthState,
  type OAuthStateStore,
  type OAuthTokenState,
} from './oauth-state.ts';

const PKCE_METHOD = 'S256';

async function update(store: OAuthStateStore, change: (state: OAuthState) => OAuthState) {
  await store.save(change(await store.load()));
}

function withoutPending(state: OAuthState): OAuthState {
  const { codeVerifier: _verifier, pendingState: _state, ...rest } = state;
  return rest;
}

function isClientInformation(value: unknown): value is StoredOAuthClientInformation {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { client_id?: unknown }).client_id === 'string'
  );
}

/**
 * Refuses what the SDK would let through: an authorization server that does not advertise PKCE
 * S256 (or publishes no metadata to say so), and protected-resource metadata naming a resource
 * the server URL does not fall under.
 */
function checkDiscovery(discovery: OAuthDiscoveryState, serverUrl?: string): void {
  const metadata = discovery.authorizationServerMetadata;
  if (!metadata)
    throw new McpOAuthError(
      'pkce_unsupported',
      `the authorization server ${discovery.authorizationServerUrl} publishes no metadata, so its support of PKCE ${PKCE_METHOD} cannot be checked`,
    );
  if (!metadata.code_challenge_methods_supported?.includes(PKCE_METHOD))
    throw new McpOAuthError(
      'pkce_unsupported',
      `the authorization server ${metadata.issuer} does not advertise PKCE ${PKCE_METHOD}`,
    );
  const resource = discovery.resourceMetadata?.resource;
  if (
    serverUrl !== undefined &&
    resource !== undefined &&
    !checkResourceAllowed({
      requestedResource: resourceUrlFromServerUrl(serverUrl),
      configuredResource: resource,
    })
  )
    throw new McpOAuthError(
      'resource_mismatch',
      `the protected resource metadata names ${resource}, which does not cover ${serverUrl}`,
    );
}

function refreshRefused(): McpOAuthError {
  return new McpOAuthError(
    'refresh_refused',
    'the authorization server refused the refresh token; authorize again',
  );
}

/** How a provider is used inside this module; the exported one is `interactive` or `plain`. */
type Mode = 'interactive' | 'plain' | 'refresh';

/** What a provider saw during one `auth()` run. */
interface Watch {
  tokensInvalidated: boolean;
}

function makeProvider(
  options: OAuthProviderOptions,
  mode: Mode,
  serverUrl?: string,
  watch: Watch = { tokensInvalidated: false },
): OAuthClientProvider {
  const { store, redirectUrl, preRegistered, onRedirect } = options;
  const clock = options.clock ?? systemClock;
  let state: string | undefined;
  let discovery: OAuthDiscoveryState | undefined;

  const provider: OAuthClientProvider = {
    get redirectUrl() {
      return redirectUrl;
    },
    ...(options.clientMetadataUrl === undefined
      ? {}
      : { clientMetadataUrl: options.clientMetadataUrl }),
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: options.clientName ?? 'Mesh',
        redirect_uris: [redirectUrl],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
      };
    },
    state() {
      state = randomBytes(32).toString('base64url');
      return state;
    },
    async clientInformation(ctx?: OAuthClientInformationContext) {
      if (preRegistered) return { ...preRegistered, ...(ctx ? { issuer: ctx.issuer } : {}) };
      const client = (await store.load()).client;
      if (!isClientInformation(client)) return undefined;
      // A client stored before it was ever used (pre-registered by hand) is bound on first use.
      if (client.issuer === undefined && ctx) {
        const bound = { ...client, issuer: ctx.issuer };
        await update(store, (s) => ({ ...s, client: bound }));
        return bound;
      }
      return client;
    },
    // Registration only where an authorization may start: a refresh never registers a client.
    ...(mode === 'interactive'
      ? {
          async saveClientInformation(client: StoredOAuthClientInformation) {
            await update(store, (s) => ({ ...s, client: { ...client } }));
          },
        }
      : {}),
    async tokens(): Promise<StoredOAuthTokens | undefined> {
      return (await store.load()).tokens;
    },
    async saveTokens(tokens: StoredOAuthTokens) {
      const saved: OAuthTokenState = {
        access_token: tokens.access_token,
        token_type: tokens.token_type,
        ...(tokens.refresh_token === undefined ? {} : { refresh_token: tokens.refresh_token }),
        ...(tokens.expires_in === undefined
          ? {}
          : { expires_at: clock.now().getTime() + tokens.expires_in * 1000 }),
        ...(tokens.scope === undefined ? {} : { scope: tokens.scope }),
        ...(tokens.issuer === undefined ? {} : { issuer: tokens.issuer }),
      };
      await update(store, (s) => ({ ...s, tokens: saved }));
    },
    async redirectToAuthorization(authorizationUrl: URL) {
      // The SDK falls back to a new authorization when a refresh fails; a refresh never does.
      if (mode === 'refresh')
        throw watch.tokensInvalidated
          ? refreshRefused()
          : new McpOAuthError(
              'refresh_failed',
              'the access token could not be refreshed; try again or authorize again',
            );
      if (!onRedirect)
        throw new McpOAuthError('authorization_required', 'the server needs an authorization');
      await onRedirect(authorizationUrl);
    },
    async saveCodeVerifier(codeVerifier: string) {
      if (mode !== 'interactive') return;
      await update(store, (s) => ({ ...s, codeVerifier, pendingState: state }));
    },
    async codeVerifier() {
      const { codeVerifier } = await store.load();
      if (codeVerifier === undefined)
        throw new McpOAuthError('no_pending_authorization', 'no authorization is pending');
      return codeVerifier;
    },
    async invalidateCredentials(scope) {
      if (scope === 'tokens' || scope === 'all') watch.tokensInvalidated = true;
      await update(store, (s) => {
        switch (scope) {
          case 'all':
            return {};
          case 'client': {
            const { client: _client, ...rest } = s;
            return rest;
          }
          case 'tokens': {
            const { tokens: _tokens, ...rest } = s;
            return rest;
          }
          case 'verifier':
            return withoutPending(s);
          case 'discovery': {
            const { discovery: _discovery, ...rest } = s;
            return rest;
          }
        }
      });
    },
    async discoveryState() {
      discovery = (await store.load()).discovery;
      return discovery;
    },
    async saveDiscoveryState(found: OAuthDiscoveryState) {
      checkDiscovery(found, serverUrl);
      discovery = found;
      await update(store, (s) => ({ ...s, discovery: found }));
    },
    // RFC 8707 wants a `resource` on every request. With protected-resource metadata the SDK
    // sends its `resource` verbatim (after checking it covers the server URL); without, this
    // supplies the server's canonical URL instead of sending none.
    get validateResourceURL() {
      if (discovery?.resourceMetadata !== undefined) return undefined;
      return async (canonical: string | URL) => new URL(canonical);
    },
  };
  return provider;
}

/**
 * An OAuth client provider over a store, for a transport that drives the flow itself. Without
 * `onRedirect` it never starts an authorization (nor registers a client, nor saves a verifier):
 * it only uses and refreshes what the store holds.
 */
export function oauthProvider(options: OAuthProviderOptions): OAuthClientProvider {
  return makeProvider(options, options.onRedirect ? 'interactive' : 'plain');
}

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
