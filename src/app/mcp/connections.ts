import { createGuardedFetch } from '../../egress/guarded-fetch.ts';
import { beginAuthorization, finishAuthorization } from '../../mcp/oauth.ts';
import { openMcpSession } from '../../mcp/session.ts';
import type { AgentRecord } from '../../run/records.ts';
import { checkSecretValue } from '../../secrets/index.ts';
import { getAgent } from '../../store/agents.ts';
import {
  deleteBinding,
  findToolProvider,
  listBindings,
  listMcpTools,
  upsertBinding,
  type BindingRecord,
  type ToolProviderRecord,
} from '../../store/mcp.ts';
import { MeshError } from '../../tool/errors.ts';
import { checkCatalog, type CatalogCheck } from './catalog.ts';
import {
  bindingOwner,
  closeBindingSession,
  MCP_OAUTH_KIND,
  MCP_TOKEN_KIND,
  oauthStore,
} from './credentials.ts';
import { requireToolProvider } from './providers.ts';
import type { Mesh } from '../mesh.ts';

/** Connecting an agent to a remote server as its own account (a bearer token or OAuth), and back. */

/**
 * Connects an agent to a provider with the agent's own bearer token (a secret of the binding,
 * never of the provider row), then reads the catalog once.
 */
export async function connectAgent(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
  token: string,
): Promise<{ binding: BindingRecord; check: CatalogCheck }> {
  const provider = await requireToolProvider(mesh, providerSlug);
  const value = token.trim();
  if (value === '') throw new MeshError('invalid_token', 'the token is empty');
  // Refused before it is sent anywhere: a line break in a header fails inside the HTTP client.
  checkSecretValue(value, 'line');
  // Held before it is tried: a server that echoes it in a refusal must not show it to anyone.
  mesh.redactor.hold(value);
  // The token is tried before anything is stored: a refused one leaves no binding behind.
  const session = await openMcpSession({
    url: provider.url,
    token: () => Promise.resolve(value),
    fetch: createGuardedFetch({
      allowLoopbackHttp: provider.allowLoopbackHttp,
      pools: mesh.egress,
    }),
    // The operator's bound on each request to this server holds while connecting too.
    timeoutMs: provider.requestTimeoutMs,
  });
  try {
    const listing = await session.listTools();
    // The binding and its credential are written together: a refused value leaves neither.
    const binding = await mesh.transaction(async ({ db, secrets }) => {
      const written = await upsertBinding(db, {
        agentId: agent.id,
        providerId: provider.id,
        authKind: 'bearer',
      });
      await secrets.capture({
        ...bindingOwner(agent.id, provider.id),
        kind: MCP_TOKEN_KIND,
        value,
      });
      await secrets.retire(bindingOwner(agent.id, provider.id), MCP_OAUTH_KIND);
      return written;
    });
    // A session opened with the credential this one replaces is not used again.
    await closeBindingSession(mesh, agent.id, provider.id);
    const check = await checkCatalog(mesh, agent.id, provider, listing);
    return { binding, check };
  } finally {
    // The trial session ends with a DELETE: the binding's own session is opened on first use.
    await session.close();
  }
}

/**
 * Removes the binding and retires its token: the agent has no tools from the provider. Its
 * pooled session is ended (a DELETE), so the server does not hold it for an agent that left.
 */
export async function disconnectAgent(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
): Promise<boolean> {
  const provider = await requireToolProvider(mesh, providerSlug);
  const removed = await mesh.transaction(async ({ db, secrets }) => {
    await secrets.retire(bindingOwner(agent.id, provider.id), MCP_TOKEN_KIND);
    await secrets.retire(bindingOwner(agent.id, provider.id), MCP_OAUTH_KIND);
    return deleteBinding(db, agent.id, provider.id);
  });
  await closeBindingSession(mesh, agent.id, provider.id);
  return removed;
}

/** Where the authorization server sends the operator's browser back, for one binding. */
export function oauthRedirectUrl(origin: string, agentId: string, providerId: string): string {
  return new URL(`/mcp/oauth/callback/${agentId}/${providerId}`, origin).toString();
}

/**
 * Starts connecting an agent with OAuth (authorization code, PKCE S256, the resource indicator):
 * returns the authorization server's URL to send the operator's browser to. Nothing is bound
 * until the authorization finishes.
 */
export async function startOAuthConnection(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
  origin: string,
): Promise<{ authorizationUrl: URL }> {
  const provider = await requireToolProvider(mesh, providerSlug);
  const redirectUrl = oauthRedirectUrl(origin, agent.id, provider.id);
  const { store } = oauthStore(mesh, agent.id, provider.id, redirectUrl);
  return beginAuthorization({
    serverUrl: provider.url,
    store,
    redirectUrl,
    fetch: createGuardedFetch({
      allowLoopbackHttp: provider.allowLoopbackHttp,
      pools: mesh.egress,
    }),
    clientName: `Mesh (${agent.name})`,
    clock: mesh.clock,
  });
}

/**
 * Finishes an authorization the server redirected back with: the `state` must be the pending
 * one of this binding; the code is exchanged with the verifier; the binding is created (as OAuth)
 * and its catalog read.
 */
export async function finishOAuthConnection(
  mesh: Mesh,
  agentId: string,
  providerId: string,
  callback: { code: string; state: string; iss?: string },
): Promise<{ agent: AgentRecord; provider: ToolProviderRecord; check: CatalogCheck }> {
  const agent = await getAgent(mesh.db, agentId);
  const provider = await findToolProvider(mesh.db, providerId);
  if (!agent || !provider)
    throw new MeshError('binding_not_found', 'no pending authorization for this connection');
  const { store, read } = oauthStore(mesh, agent.id, provider.id);
  const doc = await read();
  if (!doc?.state.pendingState)
    throw new MeshError('mcp_oauth_failed', 'no authorization is pending for this connection');
  await finishAuthorization({
    serverUrl: provider.url,
    store,
    redirectUrl: doc.redirectUrl,
    fetch: createGuardedFetch({
      allowLoopbackHttp: provider.allowLoopbackHttp,
      pools: mesh.egress,
    }),
    code: callback.code,
    state: callback.state,
    clock: mesh.clock,
    ...(callback.iss ? { iss: callback.iss } : {}),
  });
  await mesh.transaction(async ({ db, secrets }) => {
    await upsertBinding(db, { agentId: agent.id, providerId: provider.id, authKind: 'oauth' });
    await secrets.retire(bindingOwner(agent.id, provider.id), MCP_TOKEN_KIND);
  });
  await closeBindingSession(mesh, agent.id, provider.id);
  const check = await checkCatalog(mesh, agent.id, provider);
  return { agent, provider, check };
}

/**
 * Where an OAuth connection stands: an authorization started and not yet finished (`pending`),
 * and whether the agent is bound with OAuth (with the tools its last catalog check listed).
 */
export async function oauthStatus(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
): Promise<{ pending: boolean; connected: boolean; tools: number }> {
  const provider = await requireToolProvider(mesh, providerSlug);
  const doc = await oauthStore(mesh, agent.id, provider.id).read();
  const binding = (await listBindings(mesh.db, agent.id)).find(
    (b) => b.provider.id === provider.id,
  );
  const connected = binding?.authKind === 'oauth';
  const tools = connected
    ? (await listMcpTools(mesh.db, agent.id, provider.id)).filter((t) => t.removedAt === null)
        .length
    : 0;
  return { pending: doc?.state.pendingState !== undefined, connected, tools };
}

/** An agent's bindings, for the operator. */
export async function agentConnections(mesh: Mesh, agent: AgentRecord) {
  return listBindings(mesh.db, agent.id);
}
