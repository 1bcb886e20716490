import { randomUUID } from 'node:crypto';
import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/client';
import { createGuardedFetch, EgressRefusedError } from '../mcp/guarded-fetch.ts';
import { fingerprint, remoteDefinition } from '../mcp/fingerprint.ts';
import {
  accessToken,
  beginAuthorization,
  finishAuthorization,
  type OAuthState,
  type OAuthStateStore,
} from '../mcp/oauth.ts';
import { getAgent } from '../store/agents.ts';
import {
  McpProtocolError,
  openMcpSession,
  type McpSession,
  type ToolListing,
} from '../mcp/session.ts';
import type { JsonObject, JsonSchema, JsonValue } from '../model/json.ts';
import type { Withheld } from '../policy/offer.ts';
import type { Audience } from '../policy/audience.ts';
import type { AgentRecord } from '../run/records.ts';
import {
  deleteBinding,
  findToolProvider,
  getBinding,
  insertToolProvider,
  listBindings,
  listMcpTools,
  markCatalogStale,
  markCatalogReviewed,
  recordCatalog,
  recordCatalogError,
  setBindingExclusion,
  setBindingScopes,
  setLegacyQuery,
  upsertBinding,
  type BindingRecord,
  type McpToolRecord,
  type ToolProviderRecord,
} from '../store/mcp.ts';
import type { Definition, ToolHandler, ToolOutput } from '../tool/definition.ts';
import { hasCode, MeshError, ToolUnavailableError } from '../tool/errors.ts';
import { createRegistry, TOOL_NAME_PATTERN } from '../tool/registry.ts';
import { prepareDecoder } from '../tool/decode-arguments.ts';
import type { Mesh } from './mesh.ts';

/**
 * Remote MCP: operator-registered servers, per-agent bindings holding the agent's own account,
 * catalogs with full-definition fingerprints, and the definitions a turn may offer.
 */

/** A provider slug: what namespaces its tools (`<slug>__<tool>`). Never the server's own name. */
export const SLUG_PATTERN = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;
/** The secret kind of a binding's bearer token. */
export const MCP_TOKEN_KIND = 'mcp_access_token';
/** The secret kind of a binding's OAuth state (tokens, client, discovery), sealed as one. */
export const MCP_OAUTH_KIND = 'mcp_oauth_state';
/** How long a listing without a server-given lifetime counts as fresh: not at all. */
const DEFAULT_FRESH_MS = 0;

/** The secret owner of an agent's binding to a provider. */
export function bindingOwner(agentId: string, providerId: string) {
  return { ownerType: 'agent_tool_provider' as const, ownerId: `${agentId}:${providerId}` };
}

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Registers a remote MCP server. Plain http only to loopback, and only when asked for. */
export async function addToolProvider(
  mesh: Mesh,
  input: { slug: string; url: string; allowLoopbackHttp?: boolean },
): Promise<ToolProviderRecord> {
  if (!SLUG_PATTERN.test(input.slug) || input.slug.length > 32)
    throw new MeshError(
      'invalid_tool_provider',
      'a provider slug is 1-32 lowercase letters and digits, single underscores between words',
    );
  let url: URL;
  try {
    url = new URL(input.url);
  } catch {
    throw new MeshError('invalid_tool_provider', 'the provider URL is not a URL');
  }
  if (url.username || url.password)
    throw new MeshError('invalid_tool_provider', 'the provider URL must not carry credentials');
  const loopbackHttp = url.protocol === 'http:' && isLoopbackHost(url.hostname);
  if (url.protocol !== 'https:' && !(loopbackHttp && input.allowLoopbackHttp)) {
    throw new MeshError(
      'invalid_tool_provider',
      url.protocol === 'http:' && loopbackHttp
        ? 'plain http is allowed only to loopback with --allow-loopback-http (development)'
        : 'the provider URL must be https',
    );
  }
  return insertToolProvider(mesh.db, {
    id: randomUUID(),
    slug: input.slug,
    url: url.toString(),
    allowLoopbackHttp: input.allowLoopbackHttp === true,
  });
}

export async function requireToolProvider(
  mesh: Mesh,
  slugOrId: string,
): Promise<ToolProviderRecord> {
  const provider = await findToolProvider(mesh.db, slugOrId);
  if (!provider)
    throw new MeshError(
      'tool_provider_not_found',
      `no tool provider named ${JSON.stringify(slugOrId)}`,
    );
  return provider;
}

async function requireBinding(
  mesh: Mesh,
  agent: AgentRecord,
  provider: ToolProviderRecord,
): Promise<BindingRecord> {
  const binding = await getBinding(mesh.db, agent.id, provider.id);
  if (!binding)
    throw new MeshError(
      'binding_not_found',
      `${agent.name} is not connected to ${provider.slug}; connect it first`,
    );
  return binding;
}

/** The provider a slug names and the agent's binding to it, or a typed refusal. */
async function requireConnection(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
): Promise<{ provider: ToolProviderRecord; binding: BindingRecord }> {
  const provider = await requireToolProvider(mesh, providerSlug);
  return { provider, binding: await requireBinding(mesh, agent, provider) };
}

/** What an OAuth binding keeps, sealed as one secret: the flow's state and its redirect URL. */
interface StoredOAuth {
  readonly redirectUrl: string;
  readonly state: OAuthState;
}

/** One store object per binding and Mesh, so concurrent refreshes in a process share one. */
const oauthStores = new WeakMap<Mesh, Map<string, OAuthStateStore>>();

function oauthStore(mesh: Mesh, agentId: string, providerId: string, redirectUrl?: string) {
  const owner = bindingOwner(agentId, providerId);
  const byBinding = oauthStores.get(mesh) ?? new Map<string, OAuthStateStore>();
  oauthStores.set(mesh, byBinding);
  const read = async (): Promise<StoredOAuth | undefined> => {
    const text = await mesh.secrets.reveal({ ...owner, kind: MCP_OAUTH_KIND });
    return text === undefined ? undefined : (JSON.parse(text) as StoredOAuth);
  };
  const write = async (doc: StoredOAuth) => {
    await mesh.secrets.capture({ ...owner, kind: MCP_OAUTH_KIND, value: JSON.stringify(doc) });
  };
  let store = byBinding.get(owner.ownerId);
  if (!store || redirectUrl) {
    store = {
      load: async () => (await read())?.state ?? {},
      save: async (state) => {
        const url = redirectUrl ?? (await read())?.redirectUrl;
        if (!url) throw new MeshError('mcp_oauth_failed', 'no authorization was started');
        await write({ redirectUrl: url, state });
      },
    };
    byBinding.set(owner.ownerId, store);
  }
  return { store, read };
}

/** The server refused the access token before its time: the next read refreshes it. */
async function expireOAuthToken(mesh: Mesh, agentId: string, providerId: string): Promise<void> {
  const { store, read } = oauthStore(mesh, agentId, providerId);
  const doc = await read();
  if (!doc?.state.tokens) return;
  await store.save({ ...doc.state, tokens: { ...doc.state.tokens, expires_at: 0 } });
}

/** The agent's credential for a provider: its bearer token, or an OAuth access token. */
async function credentialFor(
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
  return accessToken({ serverUrl: provider.url, store, redirectUrl: doc.redirectUrl, fetch });
}

/** Opens a connection as the agent's own account: its token, its guarded egress. */
async function sessionFor(
  mesh: Mesh,
  agentId: string,
  provider: ToolProviderRecord,
): Promise<McpSession> {
  const fetch = createGuardedFetch({ allowLoopbackHttp: provider.allowLoopbackHttp });
  const session = await openMcpSession({
    url: provider.url,
    token: () => credentialFor(mesh, agentId, provider, fetch),
    // A refused OAuth access token is refreshed before the one retry; a bearer token is not.
    onUnauthorized: () => expireOAuthToken(mesh, agentId, provider.id),
    fetch,
  });
  // A list-changed notification makes the next look re-read the catalog.
  session.onToolsChanged(() => {
    markCatalogStale(mesh.db, agentId, provider.id).catch(() => undefined);
  });
  return session;
}

/** What a catalog check found. */
export interface CatalogCheck {
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
  readonly pages: number;
  readonly stoppedBecause?: string;
}

/**
 * Lists every page of the server's tools as the agent's account sees them and records the
 * catalog: a changed fingerprint is a changed tool (its legacy-query mark no longer applies).
 */
export async function checkCatalog(
  mesh: Mesh,
  agentId: string,
  provider: ToolProviderRecord,
  read?: ToolListing,
): Promise<CatalogCheck> {
  const own = read ? undefined : await sessionFor(mesh, agentId, provider);
  try {
    const before = new Map(
      (await listMcpTools(mesh.db, agentId, provider.id))
        .filter((t) => t.removedAt === null)
        .map((t) => [t.toolName, t.fingerprint]),
    );
    const listing = read ?? (await (own as McpSession).listTools());
    const tools = new Map<string, { name: string; definition: JsonObject; fingerprint: string }>();
    for (const tool of listing.tools) {
      const definition = remoteDefinition(tool);
      // A server listing a name twice gets its first definition; the repeat is ignored.
      if (!tools.has(tool.name))
        tools.set(tool.name, { name: tool.name, definition, fingerprint: fingerprint(definition) });
    }
    const freshMs = listing.ttlMs ?? DEFAULT_FRESH_MS;
    await recordCatalog(
      mesh.db,
      { agentId, providerId: provider.id },
      [...tools.values()],
      new Date(Date.now() + freshMs),
    );
    return {
      added: [...tools.keys()].filter((n) => !before.has(n)),
      changed: [...tools.values()]
        .filter((t) => before.has(t.name) && before.get(t.name) !== t.fingerprint)
        .map((t) => t.name),
      removed: [...before.keys()].filter((n) => !tools.has(n)),
      pages: listing.pages,
      ...(listing.stoppedBecause ? { stoppedBecause: listing.stoppedBecause } : {}),
    };
  } catch (error) {
    await recordCatalogError(
      mesh.db,
      { agentId, providerId: provider.id },
      error instanceof Error ? error.message : 'the listing failed',
    );
    throw error;
  } finally {
    await own?.close();
  }
}

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
  // The token is tried before anything is stored: a refused one leaves no binding behind.
  const session = await openMcpSession({
    url: provider.url,
    token: () => Promise.resolve(value),
    fetch: createGuardedFetch({ allowLoopbackHttp: provider.allowLoopbackHttp }),
  });
  try {
    const listing = await session.listTools();
    const binding = await upsertBinding(mesh.db, {
      agentId: agent.id,
      providerId: provider.id,
      authKind: 'bearer',
    });
    await mesh.secrets.capture({
      ...bindingOwner(agent.id, provider.id),
      kind: MCP_TOKEN_KIND,
      value,
    });
    await mesh.secrets.retire(bindingOwner(agent.id, provider.id), MCP_OAUTH_KIND);
    const check = await checkCatalog(mesh, agent.id, provider, listing);
    return { binding, check };
  } finally {
    await session.close();
  }
}

/** Removes the binding and retires its token: the agent has no tools from the provider. */
export async function disconnectAgent(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
): Promise<boolean> {
  const provider = await requireToolProvider(mesh, providerSlug);
  await mesh.secrets.retire(bindingOwner(agent.id, provider.id), MCP_TOKEN_KIND);
  await mesh.secrets.retire(bindingOwner(agent.id, provider.id), MCP_OAUTH_KIND);
  return deleteBinding(mesh.db, agent.id, provider.id);
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
    fetch: createGuardedFetch({ allowLoopbackHttp: provider.allowLoopbackHttp }),
    clientName: `Mesh (${agent.name})`,
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
    fetch: createGuardedFetch({ allowLoopbackHttp: provider.allowLoopbackHttp }),
    code: callback.code,
    state: callback.state,
    ...(callback.iss ? { iss: callback.iss } : {}),
  });
  await upsertBinding(mesh.db, { agentId: agent.id, providerId: provider.id, authKind: 'oauth' });
  await mesh.secrets.retire(bindingOwner(agent.id, provider.id), MCP_TOKEN_KIND);
  const check = await checkCatalog(mesh, agent.id, provider);
  return { agent, provider, check };
}

/** Whether a catalog row runs with query semantics: only a marked, unchanged definition does. */
function isLegacyQuery(tool: McpToolRecord): boolean {
  return tool.legacyQueryFingerprint !== null && tool.legacyQueryFingerprint === tool.fingerprint;
}

/** A remote tool as an operator reviews it. */
export interface CatalogEntry {
  readonly tool: string;
  readonly name: string;
  readonly fingerprint: string;
  readonly status: 'new' | 'changed' | 'reviewed' | 'removed';
  readonly previousFingerprint: string | null;
  readonly semantics: 'effect' | 'query';
  readonly legacyQueryMarked: boolean;
  readonly excluded: boolean;
  readonly readOnlyHint: boolean | null;
  readonly description: string;
  readonly changedAt: Date;
}

/** A binding's catalog rows as an operator reviews them. */
function catalogEntries(
  provider: ToolProviderRecord,
  binding: BindingRecord,
  rows: readonly McpToolRecord[],
): CatalogEntry[] {
  return rows.map((t) => {
    const annotations = t.definition['annotations'] as Record<string, unknown> | undefined;
    const hint = annotations?.['readOnlyHint'];
    return {
      tool: `${provider.slug}__${t.toolName}`,
      name: t.toolName,
      fingerprint: t.fingerprint,
      status:
        t.removedAt !== null
          ? 'removed'
          : t.reviewedFingerprint === null
            ? 'new'
            : t.reviewedFingerprint !== t.fingerprint
              ? 'changed'
              : 'reviewed',
      previousFingerprint: t.previousFingerprint,
      semantics: isLegacyQuery(t) ? 'query' : 'effect',
      legacyQueryMarked: t.legacyQueryFingerprint !== null,
      excluded: binding.excludedTools.includes(t.toolName),
      readOnlyHint: typeof hint === 'boolean' ? hint : null,
      description:
        typeof t.definition['description'] === 'string' ? t.definition['description'] : '',
      changedAt: t.changedAt,
    };
  });
}

/** The binding's catalog with fingerprints and what changed since the operator last reviewed. */
export async function catalogView(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
): Promise<{ provider: ToolProviderRecord; binding: BindingRecord; tools: CatalogEntry[] }> {
  const { provider, binding } = await requireConnection(mesh, agent, providerSlug);
  const rows = await listMcpTools(mesh.db, agent.id, provider.id);
  return { provider, binding, tools: catalogEntries(provider, binding, rows) };
}

/** One of an agent's connections with its catalog, and whether its credential is present. */
export interface ConnectionView {
  readonly provider: ToolProviderRecord;
  readonly binding: BindingRecord;
  readonly tools: readonly CatalogEntry[];
  readonly credentialPresent: boolean;
}

/** Every connection of an agent, with its catalog: what the MCP tab shows. */
export async function connectionViews(mesh: Mesh, agent: AgentRecord): Promise<ConnectionView[]> {
  return Promise.all(
    (await listBindings(mesh.db, agent.id)).map(async (binding) => {
      const { provider } = binding;
      const [rows, held] = await Promise.all([
        listMcpTools(mesh.db, agent.id, provider.id),
        mesh.secrets.describe(bindingOwner(agent.id, provider.id)),
      ]);
      return {
        provider,
        binding,
        tools: catalogEntries(provider, binding, rows),
        credentialPresent: held.length > 0,
      };
    }),
  );
}

/** Re-reads a connection's catalog now. */
export async function recheckCatalog(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
): Promise<CatalogCheck> {
  const { provider } = await requireConnection(mesh, agent, providerSlug);
  return checkCatalog(mesh, agent.id, provider);
}

export async function reviewCatalog(mesh: Mesh, agent: AgentRecord, providerSlug: string) {
  const { provider } = await requireConnection(mesh, agent, providerSlug);
  await markCatalogReviewed(mesh.db, agent.id, provider.id);
}

export async function excludeTool(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
  toolName: string,
  excluded: boolean,
) {
  const { provider } = await requireConnection(mesh, agent, providerSlug);
  await setBindingExclusion(mesh.db, agent.id, provider.id, toolName, excluded);
}

/** Marks a tool's current definition as a legacy query; a changed definition loses the mark. */
export async function markLegacyQuery(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
  toolName: string,
  legacy: boolean,
) {
  const { provider } = await requireConnection(mesh, agent, providerSlug);
  if (!(await setLegacyQuery(mesh.db, agent.id, provider.id, toolName, legacy)))
    throw new MeshError(
      'tool_not_found',
      `${provider.slug} lists no tool ${JSON.stringify(toolName)}`,
    );
}

export async function setScopes(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
  /** Undefined keeps a scope as it is; null lifts it. */
  scopes: {
    audiences?: readonly Audience[] | null;
    conversationIds?: readonly string[] | null;
  },
) {
  const { provider, binding } = await requireConnection(mesh, agent, providerSlug);
  await setBindingScopes(mesh.db, agent.id, provider.id, {
    audiences: scopes.audiences === undefined ? binding.audiences : scopes.audiences,
    conversationIds:
      scopes.conversationIds === undefined ? binding.conversationIds : scopes.conversationIds,
  });
}

/** Text for the model from a result's content blocks; non-text blocks are described, not inlined. */
function contentText(content: readonly ContentBlock[]): string {
  return content
    .map((block) => {
      switch (block.type) {
        case 'text':
          return block.text;
        case 'image':
        case 'audio':
          return `[${block.type} ${block.mimeType}, ${Math.floor((block.data.length * 3) / 4)} bytes]`;
        case 'resource_link':
          return `[resource ${block.uri}]`;
        case 'resource': {
          const r = block.resource as { uri: string; text?: string };
          return typeof r.text === 'string' ? r.text : `[resource ${r.uri}]`;
        }
        default:
          return '[content]';
      }
    })
    .join('\n');
}

/** Turns a call's result into what the executor records: `isError` results are observations. */
function toOutput(
  result: CallToolResult,
  outputSchemaCheck?: (data: unknown) => string | undefined,
): ToolOutput {
  const text = contentText(result.content ?? []);
  const structured = result.structuredContent as JsonValue | undefined;
  if (result.isError) return { text: `the tool reported an error: ${text || '(no message)'}` };
  if (structured !== undefined && outputSchemaCheck) {
    const problem = outputSchemaCheck(structured);
    if (problem)
      return {
        text: `the server's structured result does not match its output schema (${problem}); text: ${text}`,
      };
  }
  return structured === undefined ? { text } : { text, data: structured };
}

/** A definition the registry can hold for one catalog row, calling the server as the agent. */
function definitionFor(mesh: Mesh, provider: ToolProviderRecord, tool: McpToolRecord): Definition {
  const query = isLegacyQuery(tool);
  const remote = tool.definition;
  const inputSchema = (remote['inputSchema'] as JsonSchema | undefined) ?? { type: 'object' };
  const outputSchema = remote['outputSchema'] as JsonSchema | undefined;
  const execute: ToolHandler = async (ctx, args) => {
    let session: McpSession;
    try {
      session = await sessionFor(mesh, ctx.agentId, provider);
    } catch (error) {
      // Nothing was sent: even an effect did not act. Query semantics may say "unavailable".
      if (query) throw new ToolUnavailableError(`${provider.slug} could not be reached`);
      throw error;
    }
    try {
      const result = await session.callTool(tool.toolName, args, ctx.signal);
      return toOutput(result, outputSchema ? outputChecker(outputSchema) : undefined);
    } catch (error) {
      if (hasCode(error, McpProtocolError.code))
        return { text: `${provider.slug} refused the call: ${error.message}` };
      if (hasCode(error, EgressRefusedError.code)) throw error;
      // The request may have reached the server: only a query may be reported as unavailable.
      if (query) throw new ToolUnavailableError(`${provider.slug} did not answer`);
      throw error;
    } finally {
      await session.close();
    }
  };
  const description =
    typeof remote['description'] === 'string'
      ? remote['description']
      : typeof remote['title'] === 'string'
        ? remote['title']
        : '';
  return {
    tool: { name: `${provider.slug}__${tool.toolName}`, description, parameters: inputSchema },
    class: query ? 'query' : 'effect',
    replay: query ? 'replayable' : 'effectful',
    needs: [],
    ...(outputSchema ? { outputSchema } : {}),
    origin: {
      source: 'remote',
      packageId: `mcp.${provider.slug}`,
      version: '0',
      digest: tool.fingerprint,
    },
    execute,
  };
}

/**
 * A check of structured results against a remote output schema (the executor's own decoder, so
 * the two never disagree). A mismatch is the server's fault: the call is reported, not fatal.
 */
function outputChecker(schema: JsonSchema): (data: unknown) => string | undefined {
  return (data) => {
    try {
      const errors = prepareDecoder(schema, 'lenient').compiled.validate(data);
      const first = errors[0];
      return first ? `at ${first.instancePath || '/'}` : undefined;
    } catch {
      return 'the output schema itself is not valid';
    }
  };
}

/**
 * Checked definitions by (provider, tool, fingerprint, semantics), per Mesh: an unchanged remote
 * tool is compiled once, not at every turn (the decoders are cached by schema object).
 */
type Checked = { definition: Definition } | { refused: string };
const checkedDefinitions = new WeakMap<Mesh, Map<string, Checked>>();
const MAX_CHECKED = 5000;

function checkedDefinition(mesh: Mesh, provider: ToolProviderRecord, tool: McpToolRecord): Checked {
  const cache = checkedDefinitions.get(mesh) ?? new Map<string, Checked>();
  checkedDefinitions.set(mesh, cache);
  const key = `${provider.id}\n${tool.toolName}\n${tool.fingerprint}\n${isLegacyQuery(tool) ? 'query' : 'effect'}`;
  let entry = cache.get(key);
  if (!entry) {
    const definition = definitionFor(mesh, provider, tool);
    try {
      createRegistry([definition]);
      entry = { definition };
    } catch (error) {
      entry = {
        refused:
          error instanceof Error ? (error.message.split('\n')[0] ?? '').slice(0, 200) : 'invalid',
      };
    }
    if (cache.size >= MAX_CHECKED) cache.clear();
    cache.set(key, entry);
  }
  return entry;
}

/** The remote tools an agent's turn (or an operator's call) may use, and why others may not. */
export interface RemoteOffer {
  readonly definitions: readonly Definition[];
  readonly withheld: readonly Withheld[];
}

/**
 * The remote definitions of an agent's bindings for one conversation. Catalogs past their
 * freshness are re-checked first; a binding whose check fails offers nothing this turn.
 */
export async function remoteOffer(
  mesh: Mesh,
  agentId: string,
  scope: {
    audience?: Audience;
    conversationId?: string | null;
    /**
     * When a catalog cannot be re-checked: `withhold` its tools (a turn), or use them as last
     * seen with effect semantics (an operator's explicit call: no definition can be trusted to
     * be unchanged, so none keeps query semantics).
     */
    onCheckFailure?: 'withhold' | 'last_seen';
  },
): Promise<RemoteOffer> {
  const definitions: Definition[] = [];
  const withheld: Withheld[] = [];
  for (const binding of await listBindings(mesh.db, agentId)) {
    const provider = binding.provider;
    const inScope =
      (scope.audience === undefined ||
        binding.audiences === null ||
        binding.audiences.includes(scope.audience)) &&
      (scope.conversationId === undefined ||
        scope.conversationId === null ||
        binding.conversationIds === null ||
        binding.conversationIds.includes(scope.conversationId));
    const stale =
      binding.catalogFreshUntil === null || binding.catalogFreshUntil.getTime() <= Date.now();
    let unchecked = false;
    if (inScope && stale) {
      try {
        await checkCatalog(mesh, agentId, provider);
      } catch (error) {
        if (scope.onCheckFailure !== 'last_seen') {
          withheld.push({
            name: `${provider.slug}__*`,
            reason: `the catalog of ${provider.slug} could not be read: ${error instanceof Error ? error.message.slice(0, 200) : 'failure'}`,
          });
          continue;
        }
        unchecked = true;
      }
    }
    for (const tool of await listMcpTools(mesh.db, agentId, provider.id)) {
      if (tool.removedAt !== null) continue;
      const name = `${provider.slug}__${tool.toolName}`;
      if (binding.excludedTools.includes(tool.toolName)) {
        withheld.push({ name, reason: `excluded on the ${provider.slug} connection` });
        continue;
      }
      if (!inScope) {
        withheld.push({
          name,
          reason: `the ${provider.slug} connection is not scoped to this conversation`,
        });
        continue;
      }
      if (!TOOL_NAME_PATTERN.test(name)) {
        withheld.push({
          name: name.slice(0, 80),
          reason: 'the namespaced name is not one model providers accept',
        });
        continue;
      }
      const checked = checkedDefinition(
        mesh,
        provider,
        unchecked ? { ...tool, legacyQueryFingerprint: null } : tool,
      );
      if ('refused' in checked) {
        withheld.push({ name, reason: `its definition was refused: ${checked.refused}` });
        continue;
      }
      definitions.push(checked.definition);
    }
  }
  return { definitions, withheld };
}

/** An agent's bindings, for the operator. */
export async function agentConnections(mesh: Mesh, agent: AgentRecord) {
  return listBindings(mesh.db, agent.id);
}
