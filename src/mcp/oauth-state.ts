import type { FetchLike, OAuthDiscoveryState } from '@modelcontextprotocol/client';
import { MeshError } from '../tool/errors.ts';
import type { Clock } from '../tool/clock.ts';

/** What the OAuth flow of a remote MCP binding keeps and is given, and how it fails. */

/** Refresh an access token this close to its expiry, or after it. */
export const REFRESH_MARGIN_MS = 60_000;

/** The tokens of a binding, as stored. */
export interface OAuthTokenState {
  access_token: string;
  refresh_token?: string;
  /** Epoch ms; absent when the server gave no lifetime. */
  expires_at?: number;
  token_type: string;
  scope?: string;
  /** The authorization server that issued them (stamped by the SDK, checked when they are read). */
  issuer?: string;
}

/** What a binding persists: one JSON document, a secret as a whole. */
export interface OAuthState {
  tokens?: OAuthTokenState;
  /** The (dynamically registered or pre-registered) client information. */
  client?: Record<string, unknown>;
  /** During a pending authorization. */
  codeVerifier?: string;
  /** The `state` value of a pending authorization. */
  pendingState?: string;
  /**
   * What discovery found (protected-resource and authorization-server metadata), checked when it
   * was saved, so finishing and refreshing talk to the authorization server that was approved.
   */
  discovery?: OAuthDiscoveryState;
}

export interface OAuthStateStore {
  load(): Promise<OAuthState>;
  save(state: OAuthState): Promise<void>;
  /**
   * Runs a refresh holding this binding's refresh lock across every process that shares the
   * store's database, handing it a store that reads and writes under that lock. The refresh
   * re-reads the tokens inside it, so a token another replica refreshed meanwhile is used as it
   * is, and a rotating refresh token is never spent twice. Without it, refreshes are serialized
   * within this process only.
   */
  exclusive?<T>(refresh: (locked: OAuthStateStore) => Promise<T>): Promise<T>;
}

/** Why an OAuth step failed; `data.reason` of {@link McpOAuthError}. */
export type OAuthFailure =
  | 'discovery_failed'
  | 'pkce_unsupported'
  | 'resource_mismatch'
  | 'authorization_failed'
  | 'no_pending_authorization'
  | 'state_mismatch'
  | 'token_exchange_failed'
  | 'refresh_refused'
  | 'refresh_failed'
  | 'authorization_required';

/** An OAuth step failed. The message never holds a token, code, verifier or client secret. */
export class McpOAuthError extends MeshError {
  static readonly code = 'mcp_oauth_failed';
  constructor(
    readonly reason: OAuthFailure,
    message: string,
  ) {
    super(McpOAuthError.code, message, { reason });
  }
}

export interface OAuthClientOptions {
  readonly store: OAuthStateStore;
  readonly redirectUrl: string;
  /** Sent as `client_name` when registering dynamically. */
  readonly clientName?: string;
  /** An https URL of Mesh's client metadata document, used as client_id where the server allows. */
  readonly clientMetadataUrl?: string;
  /** Credentials registered with the authorization server out of band (no registration then). */
  readonly preRegistered?: { client_id: string; client_secret?: string };
  /** Where token lifetimes are measured: the system clock unless a test moves time. */
  readonly clock?: Clock;
}

export interface OAuthProviderOptions extends OAuthClientOptions {
  /** Sends the operator's browser to the authorization URL; without it no authorization starts. */
  readonly onRedirect?: (authorizationUrl: URL) => void | Promise<void>;
}

export interface OAuthFlowOptions extends OAuthClientOptions {
  /** The MCP server: the protected resource. */
  readonly serverUrl: string;
  /** The egress-guarded fetch: every metadata, registration and token request goes through it. */
  readonly fetch: FetchLike;
}
