import { createGuardedFetch } from '../../egress/guarded-fetch.ts';
import { accessToken } from '../../mcp/oauth.ts';
import type { OAuthState, OAuthStateStore } from '../../mcp/oauth-state.ts';
import type { ResendRule } from '../../mcp/session-pool.ts';
import { openMcpSession, type McpSession } from '../../mcp/session.ts';
import type { SecretStore } from '../../secrets/secret-store.ts';
import type { ToolProviderRecord } from '../../store/mcp.ts';
import { MeshError } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';

/**
 * An agent's credentials for a remote server — its bearer token or its OAuth state, each a secret
 * of the binding — and the session opened with them, as the agent's own account.
 */

/** The secret kind of a binding's bearer token. */
export const MCP_TOKEN_KIND = 'mcp_access_token';
/** The secret kind of a binding's OAuth state (tokens, client, discovery), sealed as one. */
export const MCP_OAUTH_KIND = 'mcp_oauth_state';

/** The key of an agent's binding to a provider: its secrets' owner id, its pooled session. */
export function bindingKey(agentId: string, providerId: string): string {
  return `${agentId}:${providerId}`;
}

/** The secret owner of an agent's binding to a provider. */
export function bindingOwner(agentId: string, providerId: string) {
  return { ownerType: 'agent_tool_provider' as const, ownerId: bindingKey(agentId, providerId) };
}

/** What an OAuth binding keeps, sealed as one secret: the flow's state and its redirect URL. */
interface StoredOAuth {
  readonly redirectUrl: string;
  readonly state: OAuthState;
}

/**
 * The OAuth state store of one binding. One store object per binding and Mesh (kept on
 * `mesh.mcp`), so concurrent refreshes in a process share one refresh.
 */
export function oauthStore(mesh: Mesh, agentId: string, providerId: string, redirectUrl?: string) {
  const owner = bindingOwner(agentId, providerId);
  const byBinding = mesh.mcp.oauthStores;
  const reader = (secrets: SecretStore) => async (): Promise<StoredOAuth | undefined> => {
    const text = await secrets.reveal({ ...owner, kind: MCP_OAUTH_KIND });
    if (text === undefined) return undefined;
    const doc = JSON.parse(text) as StoredOAuth;
    holdOAuthSecrets(mesh, doc.state);
    return doc;
  };
  const read = reader(mesh.secrets);
  const storeOver = (secrets: SecretStore): OAuthStateStore => {
    const readHere = reader(secrets);
    return {
      load: async () => (await readHere())?.state ?? {},
      save: async (state) => {
        const url = redirectUrl ?? (await readHere())?.redirectUrl;
        if (!url) throw new MeshError('mcp_oauth_failed', 'no authorization was started');
        holdOAuthSecrets(mesh, state);
        await secrets.capture({
          ...owner,
          kind: MCP_OAUTH_KIND,
          value: JSON.stringify({ redirectUrl: url, state } satisfies StoredOAuth),
          format: 'document',
        });
      },
    };
  };
  let store = byBinding.get(owner.ownerId);
  if (!store || redirectUrl) {
    store = {
      ...storeOver(mesh.secrets),
      // Replicas share PostgreSQL: a refresh holds the binding's lock in one transaction, and
      // reads and writes the state in it. The embedded database has one process, whose refreshes
      // share one already (and a transaction there would hold up every query for the refresh).
      ...(mesh.db.kind === 'postgres'
        ? {
            exclusive: <T>(refresh: (locked: OAuthStateStore) => Promise<T>) =>
              mesh.transaction(async ({ db, secrets }) => {
                await db.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [
                  `mcp_oauth_refresh:${owner.ownerId}`,
                ]);
                return refresh(storeOver(secrets));
              }),
          }
        : {}),
    };
    byBinding.set(owner.ownerId, store);
  }
  return { store, read };
}

/** The credentials inside an OAuth state, held so that an echo of any of them is redacted. */
function holdOAuthSecrets(mesh: Mesh, state: OAuthState): void {
  for (const value of [
    state.tokens?.access_token,
    state.tokens?.refresh_token,
    state.client?.['client_secret'],
  ]) {
    if (typeof value === 'string') mesh.redactor.hold(value);
  }
}

/** The server refused the access token before its time: the next read refreshes it. */
export async function expireOAuthToken(
  mesh: Mesh,
  agentId: string,
  providerId: string,
): Promise<void> {
  const { store, read } = oauthStore(mesh, agentId, providerId);
  const doc = await read();
  if (!doc?.state.tokens) return;
  await store.save({ ...doc.state, tokens: { ...doc.state.tokens, expires_at: 0 } });
}

/** The agent's credential for a provider: its bearer token, or an OAuth access token. */
export async function credentialFor(
  mesh: Mesh,
  agentId: string,
  provider: ToolProviderRecord,
  fetch: ReturnType<typeof createGuardedFetch>,
): Promise<string | undefined> {
  const owner = bindingOwner(agentId, provider.id);
  const bearer = await mesh.secrets.reveal({ ...owner, kind: MCP_TOKEN_KIND });
  if (bearer !== undefined) return bearer;
  const { store, read } = oauthStore(mesh, agentId, provider.id);
  const doc = await read();
  if (!doc) return undefined;
  return accessToken({
    serverUrl: provider.url,
    store,
    redirectUrl: doc.redirectUrl,
    fetch,
    clock: mesh.clock,
  });
}

/** Opens a connection as the agent's own account: its token, its guarded egress. */
async function openSessionFor(
  mesh: Mesh,
  agentId: string,
  provider: ToolProviderRecord,
  signal: AbortSignal,
): Promise<McpSession> {
  const fetch = createGuardedFetch({
    allowLoopbackHttp: provider.allowLoopbackHttp,
    pools: mesh.egress,
  });
  // A bearer token is read once for the session: connecting the binding with another credential
  // ends its session. An OAuth access token is read per request, refreshed when it expires.
  const bearer = await mesh.secrets.reveal({
    ...bindingOwner(agentId, provider.id),
    kind: MCP_TOKEN_KIND,
  });
  const oauth = bearer === undefined && (await oauthStore(mesh, agentId, provider.id).read());
  const session = await openMcpSession({
    url: provider.url,
    token:
      bearer === undefined
        ? () => credentialFor(mesh, agentId, provider, fetch)
        : async () => bearer,
    // A refused OAuth access token is refreshed before the one retry; a bearer token is not.
    onUnauthorized: () => expireOAuthToken(mesh, agentId, provider.id),
    fetch,
    timeoutMs: provider.requestTimeoutMs,
    signal,
    credential: bearer !== undefined ? 'bearer' : oauth ? 'oauth' : 'none',
  });
  // A list-changed notification makes the catalog stale and has it read again, off any call.
  session.onToolsChanged(() => mesh.mcp.toolsChanged(agentId, provider));
  return session;
}

/**
 * Runs `request` on the binding's pooled session, as the agent's own account: one session per
 * binding and Mesh, opened on first use and reused by every call and catalog check after it.
 * `resend` says whether a request that failed on a session the server dropped may be sent once
 * more on a fresh one (see {@link ResendRule}).
 */
export function withSession<T>(
  mesh: Mesh,
  agentId: string,
  provider: ToolProviderRecord,
  request: (session: McpSession) => Promise<T>,
  resend: ResendRule,
): Promise<T> {
  return mesh.mcp.sessions.use(
    bindingKey(agentId, provider.id),
    (signal) => openSessionFor(mesh, agentId, provider, signal),
    request,
    resend,
    sessionSettings(provider),
  );
}

/**
 * Opens the binding's pooled session now if it has none: a turn that offers the server's tools
 * calls this at its start, so a first call does not wait for the handshake (see SessionPool.warm).
 */
export function warmSession(mesh: Mesh, agentId: string, provider: ToolProviderRecord): void {
  mesh.mcp.sessions.warm(
    bindingKey(agentId, provider.id),
    (signal) => openSessionFor(mesh, agentId, provider, signal),
    sessionSettings(provider),
  );
}

/** What a binding's session is opened with: another value opens a new one (see SessionPool.use). */
function sessionSettings(provider: ToolProviderRecord): string {
  return `${provider.url}\n${provider.allowLoopbackHttp}\n${provider.requestTimeoutMs}`;
}

/** Ends the binding's pooled session, if one is open (a `DELETE` to the server). */
export function closeBindingSession(mesh: Mesh, agentId: string, providerId: string) {
  return mesh.mcp.sessions.close(bindingKey(agentId, providerId));
}
