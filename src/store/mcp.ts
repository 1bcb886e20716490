import type { JsonObject } from '../model/json.ts';
import type { Audience } from '../policy/audience.ts';
import type { McpCatalogStore } from '../mcp/catalog-store.ts';
import type { BindingRecord, McpToolRecord, ToolProviderRecord } from '../mcp/records.ts';
import { isUniqueViolation, StoreError, type Queryable } from './db.ts';

export type { BindingRecord, McpToolRecord, ToolProviderRecord } from '../mcp/records.ts';

const PROVIDER = `id, slug, url, allow_loopback_http as "allowLoopbackHttp",
  request_timeout_ms as "requestTimeoutMs", created_at as "createdAt"`;

/** Sets a provider's request timeout; false when there is no such provider. */
export async function setToolProviderTimeout(
  q: Queryable,
  providerId: string,
  requestTimeoutMs: number,
): Promise<ToolProviderRecord | undefined> {
  const { rows } = await q.query<ToolProviderRecord>(
    `update tool_providers set request_timeout_ms = $2 where id = $1 returning ${PROVIDER}`,
    [providerId, requestTimeoutMs],
  );
  return rows[0];
}

export async function insertToolProvider(
  q: Queryable,
  p: {
    id: string;
    slug: string;
    url: string;
    allowLoopbackHttp: boolean;
    /** Default: the column's, 60 s. */
    requestTimeoutMs?: number;
  },
): Promise<ToolProviderRecord> {
  try {
    const { rows } = await q.query<ToolProviderRecord>(
      `insert into tool_providers (id, slug, url, allow_loopback_http, request_timeout_ms)
       values ($1, $2, $3, $4, $5) returning ${PROVIDER}`,
      [p.id, p.slug, p.url, p.allowLoopbackHttp, p.requestTimeoutMs ?? 60_000],
    );
    return rows[0] as ToolProviderRecord;
  } catch (error) {
    if (isUniqueViolation(error))
      throw new StoreError(
        'tool_provider_exists',
        `a tool provider named ${p.slug} already exists`,
      );
    throw error;
  }
}

export async function findToolProvider(
  q: Queryable,
  slugOrId: string,
): Promise<ToolProviderRecord | undefined> {
  const { rows } = await q.query<ToolProviderRecord>(
    `select ${PROVIDER} from tool_providers
     where kind = 'mcp' and (slug = $1 or id::text = $1) limit 1`,
    [slugOrId],
  );
  return rows[0];
}

export async function listToolProviders(q: Queryable): Promise<ToolProviderRecord[]> {
  const { rows } = await q.query<ToolProviderRecord>(
    `select ${PROVIDER} from tool_providers where kind = 'mcp' order by slug`,
  );
  return rows;
}

/** A binding's columns, read through the alias `b`. */
const BINDING = `b.agent_id as "agentId", b.provider_id as "providerId", b.auth_kind as "authKind",
  b.excluded_tools as "excludedTools", b.audiences, b.conversation_ids as "conversationIds",
  b.catalog_checked_at as "catalogCheckedAt", b.catalog_fresh_until as "catalogFreshUntil",
  b.catalog_error as "catalogError", b.created_at as "createdAt"`;

/** Creates the binding, or keeps it (exclusions and scopes intact) when it exists. */
export async function upsertBinding(
  q: Queryable,
  b: { agentId: string; providerId: string; authKind: 'bearer' | 'oauth' },
): Promise<BindingRecord> {
  const { rows } = await q.query<BindingRecord>(
    `insert into agent_tool_providers as b (agent_id, provider_id, auth_kind) values ($1, $2, $3)
     on conflict (agent_id, provider_id) do update set auth_kind = excluded.auth_kind
     returning ${BINDING}`,
    [b.agentId, b.providerId, b.authKind],
  );
  return rows[0] as BindingRecord;
}

export async function getBinding(
  q: Queryable,
  agentId: string,
  providerId: string,
): Promise<BindingRecord | undefined> {
  const { rows } = await q.query<BindingRecord>(
    `select ${BINDING} from agent_tool_providers b where b.agent_id = $1 and b.provider_id = $2`,
    [agentId, providerId],
  );
  return rows[0];
}

/** An agent's bindings with their providers. */
export async function listBindings(
  q: Queryable,
  agentId: string,
): Promise<(BindingRecord & { provider: ToolProviderRecord })[]> {
  const { rows } = await q.query<BindingRecord & { provider: ToolProviderRecord }>(
    `select ${BINDING},
       json_build_object('id', p.id, 'slug', p.slug, 'url', p.url,
         'allowLoopbackHttp', p.allow_loopback_http, 'requestTimeoutMs', p.request_timeout_ms,
         'createdAt', p.created_at) as provider
     from agent_tool_providers b join tool_providers p on p.id = b.provider_id
     where b.agent_id = $1 order by p.slug`,
    [agentId],
  );
  return rows.map((r) => ({
    ...r,
    provider: { ...r.provider, createdAt: new Date(r.provider.createdAt) },
  }));
}

export async function deleteBinding(
  q: Queryable,
  agentId: string,
  providerId: string,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `delete from agent_tool_providers where agent_id = $1 and provider_id = $2`,
    [agentId, providerId],
  );
  return rowCount > 0;
}

export async function setBindingExclusion(
  q: Queryable,
  agentId: string,
  providerId: string,
  toolName: string,
  excluded: boolean,
): Promise<void> {
  await q.query(
    excluded
      ? `update agent_tool_providers set excluded_tools = array(select distinct unnest(excluded_tools || array[$3::text]) order by 1)
         where agent_id = $1 and provider_id = $2`
      : `update agent_tool_providers set excluded_tools = array_remove(excluded_tools, $3::text)
         where agent_id = $1 and provider_id = $2`,
    [agentId, providerId, toolName],
  );
}

export async function setBindingScopes(
  q: Queryable,
  agentId: string,
  providerId: string,
  scopes: { audiences: readonly Audience[] | null; conversationIds: readonly string[] | null },
): Promise<void> {
  await q.query(
    `update agent_tool_providers set audiences = $3::text[], conversation_ids = $4::uuid[]
     where agent_id = $1 and provider_id = $2`,
    [agentId, providerId, scopes.audiences, scopes.conversationIds],
  );
}

const TOOL = `tool_name as "toolName", definition, fingerprint,
  previous_fingerprint as "previousFingerprint", legacy_query_fingerprint as "legacyQueryFingerprint",
  reviewed_fingerprint as "reviewedFingerprint", first_seen_at as "firstSeenAt",
  changed_at as "changedAt", removed_at as "removedAt"`;

export async function listMcpTools(
  q: Queryable,
  agentId: string,
  providerId: string,
): Promise<McpToolRecord[]> {
  const { rows } = await q.query<McpToolRecord>(
    `select ${TOOL} from agent_mcp_tools where agent_id = $1 and provider_id = $2 order by tool_name`,
    [agentId, providerId],
  );
  return rows;
}

/**
 * Records what a listing returned, in one transaction's statements: new tools are inserted,
 * changed ones get their new definition (the old fingerprint kept as previous), tools gone from
 * the listing are marked removed, and the binding's check times are set.
 */
export async function recordCatalog(
  q: Queryable,
  binding: { agentId: string; providerId: string },
  tools: readonly { name: string; definition: JsonObject; fingerprint: string }[],
  freshUntil: Date | null,
): Promise<void> {
  await q.query(
    `with listed as (
       select * from jsonb_to_recordset($3::jsonb) as t(name text, definition jsonb, fingerprint text)
     ), upserted as (
       insert into agent_mcp_tools (agent_id, provider_id, tool_name, definition, fingerprint)
       select $1, $2, name, definition, fingerprint from listed
       on conflict (agent_id, provider_id, tool_name) do update set
         previous_fingerprint = case when agent_mcp_tools.fingerprint <> excluded.fingerprint
           then agent_mcp_tools.fingerprint else agent_mcp_tools.previous_fingerprint end,
         changed_at = case when agent_mcp_tools.fingerprint <> excluded.fingerprint
           then now() else agent_mcp_tools.changed_at end,
         definition = excluded.definition,
         fingerprint = excluded.fingerprint,
         removed_at = null
       returning tool_name
     ), removed as (
       update agent_mcp_tools set removed_at = now()
       where agent_id = $1 and provider_id = $2 and removed_at is null
         and tool_name not in (select name from listed)
     )
     update agent_tool_providers set catalog_checked_at = now(), catalog_fresh_until = $4,
       catalog_error = null
     where agent_id = $1 and provider_id = $2`,
    [binding.agentId, binding.providerId, JSON.stringify(tools), freshUntil],
  );
}

export async function recordCatalogError(
  q: Queryable,
  binding: { agentId: string; providerId: string },
  message: string,
): Promise<void> {
  await q.query(
    `update agent_tool_providers set catalog_checked_at = now(), catalog_error = $3
     where agent_id = $1 and provider_id = $2`,
    [binding.agentId, binding.providerId, message.slice(0, 500)],
  );
}

/** The operator reviewed the catalog as it is now. */
export async function markCatalogReviewed(
  q: Queryable,
  agentId: string,
  providerId: string,
): Promise<void> {
  await q.query(
    `update agent_mcp_tools set reviewed_fingerprint = fingerprint
     where agent_id = $1 and provider_id = $2 and removed_at is null`,
    [agentId, providerId],
  );
}

/** Marks a tool's current definition as a legacy query (or clears the mark). */
export async function setLegacyQuery(
  q: Queryable,
  agentId: string,
  providerId: string,
  toolName: string,
  legacy: boolean,
): Promise<boolean> {
  const { rowCount } = await q.query(
    `update agent_mcp_tools set legacy_query_fingerprint = case when $4 then fingerprint else null end
     where agent_id = $1 and provider_id = $2 and tool_name = $3 and removed_at is null`,
    [agentId, providerId, toolName, legacy],
  );
  return rowCount > 0;
}

/** The server said its list changed: the next look re-reads the catalog. */
export async function markCatalogStale(
  q: Queryable,
  agentId: string,
  providerId: string,
): Promise<void> {
  await q.query(
    `update agent_tool_providers set catalog_fresh_until = null
     where agent_id = $1 and provider_id = $2`,
    [agentId, providerId],
  );
}

/** The names of the agents bound to a remote server, in name order. */
export async function agentsBoundTo(q: Queryable, providerId: string): Promise<string[]> {
  const { rows } = await q.query<{ name: string }>(
    `select a.name from agent_tool_providers b join agents a on a.id = b.agent_id
      where b.provider_id = $1 order by a.name`,
    [providerId],
  );
  return rows.map((r) => r.name);
}

export async function deleteToolProviderRow(q: Queryable, providerId: string): Promise<boolean> {
  const { rowCount } = await q.query(`delete from tool_providers where id = $1`, [providerId]);
  return rowCount > 0;
}

/** The catalog store of src/mcp over one database connection or pool. */
export function mcpCatalogStore(q: Queryable): McpCatalogStore {
  return {
    tools: (agentId, providerId) => listMcpTools(q, agentId, providerId),
    record: (binding, tools, freshUntil) => recordCatalog(q, binding, tools, freshUntil),
    recordError: (binding, message) => recordCatalogError(q, binding, message),
  };
}
