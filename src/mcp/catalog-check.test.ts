import { describe, expect, it } from 'vitest';
import { recordListing, reviewStatus, type CatalogCheckHost } from './catalog-check.ts';
import type { BindingKey, ListedTool, McpCatalogStore } from './catalog-store.ts';
import type { McpToolRecord } from './records.ts';
import type { ToolListing } from './session.ts';

/** The catalog store in memory: what the seam asks of a database, and nothing more. */
function memoryStore() {
  const rows = new Map<string, McpToolRecord>();
  const recorded: { freshUntil: Date | null }[] = [];
  const store: McpCatalogStore = {
    tools: async () => [...rows.values()],
    record: async (_binding: BindingKey, tools: readonly ListedTool[], freshUntil) => {
      recorded.push({ freshUntil });
      const at = new Date(0);
      for (const [name, row] of rows)
        if (!tools.some((t) => t.name === name)) rows.set(name, { ...row, removedAt: at });
      for (const t of tools) {
        const old = rows.get(t.name);
        rows.set(t.name, {
          toolName: t.name,
          definition: t.definition,
          fingerprint: t.fingerprint,
          previousFingerprint:
            old && old.fingerprint !== t.fingerprint
              ? old.fingerprint
              : (old?.previousFingerprint ?? null),
          legacyQueryFingerprint: null,
          reviewedFingerprint: old?.reviewedFingerprint ?? null,
          firstSeenAt: old?.firstSeenAt ?? at,
          changedAt: at,
          removedAt: null,
        });
      }
    },
    recordError: async () => {},
  };
  return { store, rows, recorded };
}

const tool = (name: string, description: string) => ({
  name,
  description,
  inputSchema: { type: 'object' as const },
});

describe('a catalog check through its store', () => {
  const binding = { agentId: 'a', providerId: 'p' };

  it('says what a listing added, changed and removed, keeps a repeated name’s first definition, and redacts', async () => {
    const { store, rows, recorded } = memoryStore();
    const host: CatalogCheckHost = {
      store,
      redact: (d) => JSON.parse(JSON.stringify(d).replaceAll('sk-held', '[redacted]')) as typeof d,
      defaultFreshMs: 60_000,
      now: () => new Date(1_000),
    };
    const first: ToolListing = {
      tools: [tool('search', 'find'), tool('post', 'uses sk-held'), tool('search', 'second copy')],
      pages: 1,
      ttlMs: 0,
    };
    expect(await recordListing(host, binding, first)).toEqual({
      added: ['search', 'post'],
      changed: [],
      removed: [],
      pages: 1,
    });
    // ttlMs 0 is no lifetime given: the default applies.
    expect(recorded[0]?.freshUntil).toEqual(new Date(61_000));
    expect(rows.get('search')?.definition['description']).toBe('find');
    expect(JSON.stringify(rows.get('post')?.definition)).not.toContain('sk-held');
    expect(reviewStatus(rows.get('search') as McpToolRecord)).toBe('new');

    const second: ToolListing = {
      tools: [tool('search', 'find better')],
      pages: 2,
      ttlMs: 5_000,
      stoppedBecause: 'the page cap',
    };
    expect(await recordListing(host, binding, second)).toEqual({
      added: [],
      changed: ['search'],
      removed: ['post'],
      pages: 2,
      stoppedBecause: 'the page cap',
    });
    expect(recorded[1]?.freshUntil).toEqual(new Date(6_000));
    expect(reviewStatus(rows.get('post') as McpToolRecord)).toBe('removed');
  });

  it('reads a review: new, changed since the reviewed fingerprint, or reviewed', () => {
    const base: McpToolRecord = {
      toolName: 't',
      definition: {},
      fingerprint: 'f2',
      previousFingerprint: 'f1',
      legacyQueryFingerprint: null,
      reviewedFingerprint: null,
      firstSeenAt: new Date(0),
      changedAt: new Date(0),
      removedAt: null,
    };
    expect(reviewStatus(base)).toBe('new');
    expect(reviewStatus({ ...base, reviewedFingerprint: 'f1' })).toBe('changed');
    expect(reviewStatus({ ...base, reviewedFingerprint: 'f2' })).toBe('reviewed');
  });
});
