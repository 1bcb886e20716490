import type { CatalogEntry } from './catalog.ts';
import type { BindingRecord, ToolProviderRecord } from '../../store/mcp.ts';

/* The wire shapes of remote MCP connections and catalogs, as the API and `--json` print them. */

export function bindingJson(
  b: BindingRecord & { provider?: ToolProviderRecord },
): Record<string, unknown> {
  return {
    ...(b.provider ? { provider: b.provider.slug } : {}),
    auth: b.authKind,
    excluded_tools: b.excludedTools,
    audiences: b.audiences,
    conversation_ids: b.conversationIds,
    catalog_checked_at: b.catalogCheckedAt,
    catalog_fresh_until: b.catalogFreshUntil,
    catalog_error: b.catalogError,
    created_at: b.createdAt,
  };
}

export function catalogEntryJson(t: CatalogEntry): Record<string, unknown> {
  return {
    tool: t.tool,
    name: t.name,
    description: t.description,
    fingerprint: t.fingerprint,
    previous_fingerprint: t.previousFingerprint,
    status: t.status,
    semantics: t.semantics,
    legacy_query_marked: t.legacyQueryMarked,
    legacy_query_mark_lost: t.legacyQueryMarkLost,
    excluded: t.excluded,
    read_only_hint: t.readOnlyHint,
    usable: t.withheldReason === null && t.status !== 'removed',
    withheld_reason: t.withheldReason,
    input_schema: t.definition['inputSchema'] ?? null,
    output_schema: t.definition['outputSchema'] ?? null,
    annotations: t.definition['annotations'] ?? null,
    changed_at: t.changedAt,
  };
}
