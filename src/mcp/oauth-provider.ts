import { randomBytes } from 'node:crypto';
import {
  checkResourceAllowed,
  resourceUrlFromServerUrl,
  type OAuthClientInformationContext,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type StoredOAuthClientInformation,
  type StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { systemClock } from '../tool/clock.ts';
import {
  McpOAuthError,
  type OAuthProviderOptions,
  type OAuthState,
  type OAuthStateStore,
  type OAuthTokenState,
} from './oauth-state.ts';

/*
 * The SDK's OAuth client provider over Mesh's storage-agnostic state: what `auth()` is handed to
 * discover, register, save a verifier and tokens, and refresh. The flows are in oauth.ts.
 */

export const PKCE_METHOD = 'S256';

export async function update(store: OAuthStateStore, change: (state: OAuthState) => OAuthState) {
  await store.save(change(await store.load()));
}

export function withoutPending(state: OAuthState): OAuthState {
  const { codeVerifier: _verifier, pendingState: _state, ...rest } = state;
  return rest;
}

export function isClientInformation(value: unknown): value is StoredOAuthClientInformation {
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
export function checkDiscovery(discovery: OAuthDiscoveryState, serverUrl?: string): void {
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

export function refreshRefused(): McpOAuthError {
  return new McpOAuthError(
    'refresh_refused',
    'the authorization server refused the refresh token; authorize again',
  );
}

/** How a provider is used inside this module; the exported one is `interactive` or `plain`. */
/** Tokens as the store keeps them: the expiry made a time, absent fields left out. */
function tokenState(tokens: StoredOAuthTokens, now: Date): OAuthTokenState {
  return {
    access_token: tokens.access_token,
    token_type: tokens.token_type,
    ...(tokens.refresh_token === undefined ? {} : { refresh_token: tokens.refresh_token }),
    ...(tokens.expires_in === undefined
      ? {}
      : { expires_at: now.getTime() + tokens.expires_in * 1000 }),
    ...(tokens.scope === undefined ? {} : { scope: tokens.scope }),
    ...(tokens.issuer === undefined ? {} : { issuer: tokens.issuer }),
  };
}

/** The state with what the SDK invalidated removed. */
function invalidated(
  s: OAuthState,
  scope: Parameters<NonNullable<OAuthClientProvider['invalidateCredentials']>>[0],
): OAuthState {
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
}

export type Mode = 'interactive' | 'plain' | 'refresh';

/** What a provider saw during one `auth()` run. */
export interface Watch {
  tokensInvalidated: boolean;
}

export function makeProvider(
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
      const saved = tokenState(tokens, clock.now());
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
      await update(store, (s) => invalidated(s, scope));
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
