import {
  recordListing,
  reviewStatus,
  type CatalogCheck,
  type ReviewStatus,
} from '../../mcp/catalog-check.ts';
import { McpTransportError, type ToolListing } from '../../mcp/session.ts';
import type { JsonObject } from '../../model/json.ts';
import type { Audience } from '../../policy/audience.ts';
import { isLegacyQuery, judgeRemoteTool, remoteToolName } from '../../policy/remote-offer.ts';
import { checkedDefinition } from './remote-definition.ts';
import type { AgentRecord } from '../../run/records.ts';
import {
  listBindings,
  listMcpTools,
  markCatalogReviewed,
  markCatalogStale,
  mcpCatalogStore,
  setBindingExclusion,
  setBindingScopes,
  setLegacyQuery,
  type BindingRecord,
  type McpToolRecord,
  type ToolProviderRecord,
} from '../../store/mcp.ts';
import { MeshError } from '../../tool/errors.ts';
import { bindingKey, bindingOwner, withSession } from './credentials.ts';
import { requireConnection } from './providers.ts';
import type { Mesh } from '../mesh.ts';

/** A connection's catalog: reading it with fingerprints, and the operator's review of it. */

export type { CatalogCheck } from '../../mcp/catalog-check.ts';

/** `promise`, or a rejection when `signal` aborts first (what it waits on is left running). */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Lists every page of the server's tools as the agent's account sees them (on the binding's
 * pooled session) and records the catalog: a changed fingerprint is a changed tool (its
 * legacy-query mark no longer applies). A failure is recorded on the binding (its error and the
 * time of the check) and thrown. The listing stays fresh for the server's `ttlMs`, or for the
 * Mesh's default freshness when the server gave none (or 0).
 */
export async function checkCatalog(
  mesh: Mesh,
  agentId: string,
  provider: ToolProviderRecord,
  read?: ToolListing,
  options: { signal?: AbortSignal } = {},
): Promise<CatalogCheck> {
  const { signal } = options;
  const key = bindingKey(agentId, provider.id);
  // The notices this listing answers: those that came before it was asked for.
  const answers = mesh.mcp.notices.get(key) ?? 0;
  try {
    const listing =
      read ??
      (await (signal
        ? abortable(
            withSession(mesh, agentId, provider, (session) => session.listTools(signal), 'always'),
            signal,
          )
        : withSession(mesh, agentId, provider, (session) => session.listTools(), 'always')));
    return await recordListing(
      {
        store: mcpCatalogStore(mesh.db),
        // A server's text is the outside world's: a credential it echoes is not kept.
        redact: (definition) => mesh.redactor.json(definition),
        defaultFreshMs: mesh.mcp.catalogFreshMs,
        now: () => mesh.clock.now(),
        recorded: (fingerprints) => {
          mesh.mcp.listed.set(key, fingerprints);
          mesh.mcp.confirmed.set(key, Math.max(mesh.mcp.confirmed.get(key) ?? 0, answers));
        },
      },
      { agentId, providerId: provider.id },
      listing,
    );
  } catch (error) {
    // A check stopped because the Mesh is closing says nothing about the server.
    if (!mesh.mcp.closing.signal.aborted)
      await mcpCatalogStore(mesh.db).recordError(
        { agentId, providerId: provider.id },
        mesh.redactor.text(error instanceof Error ? error.message : 'the listing failed'),
      );
    throw error;
  }
}

/**
 * Starts a check of a binding's catalog in the background, unless one is already running for it
 * (then `again` has one more run after it: a list-changed notice may postdate its listing).
 * Never rejects: the outcome is recorded on the binding. Each check has its own deadline, so a
 * server that hangs delays nothing but its own catalog.
 */
export function scheduleCatalogCheck(
  mesh: Mesh,
  agentId: string,
  provider: ToolProviderRecord,
  options: { again?: boolean } = {},
): Promise<void> {
  const runtime = mesh.mcp;
  const key = bindingKey(agentId, provider.id);
  const running = runtime.checks.get(key);
  if (running) {
    if (options.again) runtime.checksAgain.add(key);
    return running;
  }
  if (runtime.closing.signal.aborted) return Promise.resolve();
  const deadline = runtime.catalogCheckDeadlineMs;
  const timeout = new AbortController();
  const timer = setTimeout(() => {
    timeout.abort(new McpTransportError(`the server did not list its tools within ${deadline} ms`));
  }, deadline);
  timer.unref();
  const signal = AbortSignal.any([timeout.signal, runtime.closing.signal]);
  const run = checkCatalog(mesh, agentId, provider, undefined, { signal })
    .then(
      () => undefined,
      () => undefined,
    )
    .finally(() => {
      clearTimeout(timer);
      runtime.checks.delete(key);
      if (runtime.checksAgain.delete(key)) void scheduleCatalogCheck(mesh, agentId, provider);
    });
  runtime.checks.set(key, run);
  return run;
}

/**
 * The server said its tool list changed (on the binding's pooled session): the catalog is stale
 * from now on, and it is read again in the background.
 */
export function catalogChanged(mesh: Mesh, agentId: string, provider: ToolProviderRecord): void {
  // Until a listing asked for after this notice is recorded, the binding's calls are effects.
  const key = bindingKey(agentId, provider.id);
  mesh.mcp.notices.set(key, (mesh.mcp.notices.get(key) ?? 0) + 1);
  void markCatalogStale(mesh.db, agentId, provider.id)
    .catch(() => undefined)
    .then(() => scheduleCatalogCheck(mesh, agentId, provider, { again: true }));
}

/** A remote tool as an operator reviews it. */
export interface CatalogEntry {
  readonly tool: string;
  readonly name: string;
  readonly fingerprint: string;
  readonly status: ReviewStatus;
  readonly previousFingerprint: string | null;
  readonly semantics: 'effect' | 'query';
  /** The operator's legacy-query mark holds for the definition as it is now. */
  readonly legacyQueryMarked: boolean;
  /** The mark was given to an earlier definition: lost when the definition changed. */
  readonly legacyQueryMarkLost: boolean;
  readonly excluded: boolean;
  readonly readOnlyHint: boolean | null;
  readonly description: string;
  /** The definition as the server listed it: input and output schemas, annotations, execution. */
  readonly definition: JsonObject;
  /**
   * Why this tool is not offered on any turn, whatever its scope: excluded, uncallable (tasks
   * only), a definition Mesh refused (its schema), a name that cannot be mapped; null when it
   * can be offered.
   */
  readonly withheldReason: string | null;
  readonly changedAt: Date;
}

/** A binding's catalog rows as an operator reviews them. */
function catalogEntries(
  mesh: Mesh,
  provider: ToolProviderRecord,
  binding: BindingRecord,
  rows: readonly McpToolRecord[],
): CatalogEntry[] {
  return rows.map((t) => {
    const verdict = judgeRemoteTool(provider.slug, binding, t, true);
    let withheldReason: string | null = null;
    if ('withhold' in verdict) withheldReason = verdict.withhold.reason;
    else if ('offer' in verdict) {
      const checked = checkedDefinition(mesh, provider, t);
      if ('refused' in checked) withheldReason = `its definition was refused: ${checked.refused}`;
    }
    const annotations = t.definition['annotations'] as Record<string, unknown> | undefined;
    const hint = annotations?.['readOnlyHint'];
    return {
      tool: remoteToolName(provider.slug, t.toolName),
      name: t.toolName,
      fingerprint: t.fingerprint,
      status: reviewStatus(t),
      previousFingerprint: t.previousFingerprint,
      semantics: isLegacyQuery(t) ? 'query' : 'effect',
      legacyQueryMarked: isLegacyQuery(t),
      legacyQueryMarkLost: t.legacyQueryFingerprint !== null && !isLegacyQuery(t),
      excluded: binding.excludedTools.includes(t.toolName),
      readOnlyHint: typeof hint === 'boolean' ? hint : null,
      description:
        typeof t.definition['description'] === 'string' ? t.definition['description'] : '',
      definition: t.definition,
      withheldReason,
      changedAt: t.changedAt,
    };
  });
}

/** The listed tools that cannot be offered, each with why (what connecting reports at once). */
export function withheldTools(tools: readonly CatalogEntry[]): { tool: string; reason: string }[] {
  return tools.flatMap((t) =>
    t.status !== 'removed' && t.withheldReason !== null
      ? [{ tool: t.tool, reason: t.withheldReason }]
      : [],
  );
}

/** What a mapped remote tool name stands for: the server's own name, on which provider. */
export interface RemoteNameOrigin {
  readonly provider: string;
  readonly tool: string;
}

/**
 * The agent's remote tool names that are not the plain `<slug>__<name>` (a server name outside
 * the provider-safe set, mapped with a hash tag), each with the name the server gave it: what a
 * run view shows beside a call, so the mapping reads back. Tools since removed are included.
 */
export async function mappedRemoteNames(
  mesh: Mesh,
  agentId: string,
): Promise<ReadonlyMap<string, RemoteNameOrigin>> {
  const mapped = new Map<string, RemoteNameOrigin>();
  for (const binding of await listBindings(mesh.db, agentId)) {
    const slug = binding.provider.slug;
    for (const row of await listMcpTools(mesh.db, agentId, binding.provider.id)) {
      const name = remoteToolName(slug, row.toolName);
      if (name !== `${slug}__${row.toolName}`)
        mapped.set(name, { provider: slug, tool: row.toolName });
    }
  }
  return mapped;
}

/** The binding's catalog with fingerprints and what changed since the operator last reviewed. */
export async function catalogView(
  mesh: Mesh,
  agent: AgentRecord,
  providerSlug: string,
): Promise<{ provider: ToolProviderRecord; binding: BindingRecord; tools: CatalogEntry[] }> {
  const { provider, binding } = await requireConnection(mesh, agent, providerSlug);
  const rows = await listMcpTools(mesh.db, agent.id, provider.id);
  return { provider, binding, tools: catalogEntries(mesh, provider, binding, rows) };
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
        tools: catalogEntries(mesh, provider, binding, rows),
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
