import type { JsonObject } from '../model/json.ts';
import type { BindingKey, ListedTool, McpCatalogStore } from './catalog-store.ts';
import { fingerprint, remoteDefinition } from './fingerprint.ts';
import type { McpToolRecord } from './records.ts';
import type { ToolListing } from './session.ts';

/*
 * A binding's catalog: what one listing changed against what was recorded, and the status an
 * operator reviews each tool in. The listing itself (a session, its credential) and the scheduling
 * of checks are the caller's; this reads and writes the catalog through its store.
 */

/** What a catalog check found. */
export interface CatalogCheck {
  readonly added: readonly string[];
  readonly changed: readonly string[];
  readonly removed: readonly string[];
  readonly pages: number;
  readonly stoppedBecause?: string;
}

/** What a check needs besides the store: how to clean a server's text, and how fresh it stays. */
export interface CatalogCheckHost {
  readonly store: McpCatalogStore;
  /** Removes a held credential from a server's text (a server may echo one). */
  redact(definition: JsonObject): JsonObject;
  /** The listing's freshness when the server gives none, in milliseconds. */
  readonly defaultFreshMs: number;
  now(): Date;
  /** Told each tool's fingerprint (by name) once a listing is recorded. */
  recorded?(fingerprints: ReadonlyMap<string, string>): void;
}

/**
 * Records a listing of the binding's tools and says what changed since the last one: a changed
 * fingerprint is a changed tool. A server listing a name twice gets its first definition. The
 * listing stays fresh for the server's `ttlMs`, or the host's default when it gave none (or 0:
 * SEP-2549 makes `ttlMs` required and SDKs send 0 when the server set nothing).
 */
export async function recordListing(
  host: CatalogCheckHost,
  binding: BindingKey,
  listing: ToolListing,
): Promise<CatalogCheck> {
  const before = new Map(
    (await host.store.tools(binding.agentId, binding.providerId))
      .filter((t) => t.removedAt === null)
      .map((t) => [t.toolName, t.fingerprint]),
  );
  const tools = new Map<string, ListedTool>();
  for (const tool of listing.tools) {
    const definition = host.redact(remoteDefinition(tool));
    if (!tools.has(tool.name))
      tools.set(tool.name, { name: tool.name, definition, fingerprint: fingerprint(definition) });
  }
  const freshMs =
    listing.ttlMs !== undefined && listing.ttlMs > 0 ? listing.ttlMs : host.defaultFreshMs;
  await host.store.record(binding, [...tools.values()], new Date(host.now().getTime() + freshMs));
  host.recorded?.(new Map([...tools.values()].map((t) => [t.name, t.fingerprint])));
  return {
    added: [...tools.keys()].filter((n) => !before.has(n)),
    changed: [...tools.values()]
      .filter((t) => before.has(t.name) && before.get(t.name) !== t.fingerprint)
      .map((t) => t.name),
    removed: [...before.keys()].filter((n) => !tools.has(n)),
    pages: listing.pages,
    ...(listing.stoppedBecause ? { stoppedBecause: listing.stoppedBecause } : {}),
  };
}

/** Where a recorded tool stands in the operator's review. */
export type ReviewStatus = 'new' | 'changed' | 'reviewed' | 'removed';

export function reviewStatus(t: McpToolRecord): ReviewStatus {
  if (t.removedAt !== null) return 'removed';
  if (t.reviewedFingerprint === null) return 'new';
  return t.reviewedFingerprint !== t.fingerprint ? 'changed' : 'reviewed';
}
