import { describe, expect, it } from 'vitest';
import {
  bindingInScope,
  catalogStale,
  isLegacyQuery,
  judgeRemoteTool,
  remoteToolName,
  uncallableReason,
  unreadableCatalog,
  type RemoteBindingFacts,
  type RemoteToolFacts,
} from './remote-offer.ts';

const open: RemoteBindingFacts = {
  audiences: null,
  conversationIds: null,
  excludedTools: [],
  catalogFreshUntil: null,
};
const tool: RemoteToolFacts = {
  toolName: 'search',
  removedAt: null,
  fingerprint: 'f1',
  legacyQueryFingerprint: null,
};

describe('remote-offer policy', () => {
  it('admits every scope when a binding sets none, and only its own when it does', () => {
    expect(bindingInScope(open, { audience: 'shared', conversationId: 'c1' })).toBe(true);
    const direct = { ...open, audiences: ['direct' as const] };
    expect(bindingInScope(direct, { audience: 'direct' })).toBe(true);
    expect(bindingInScope(direct, { audience: 'shared' })).toBe(false);
    // An operator's call names no audience: the scope does not apply to it.
    expect(bindingInScope(direct, {})).toBe(true);
    const one = { ...open, conversationIds: ['c1'] };
    expect(bindingInScope(one, { conversationId: 'c1' })).toBe(true);
    expect(bindingInScope(one, { conversationId: 'c2' })).toBe(false);
    expect(bindingInScope(one, { conversationId: null })).toBe(true);
  });

  it('reads a catalog again when it was never fresh or its lifetime has passed', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    expect(catalogStale(open, at)).toBe(true);
    expect(catalogStale({ catalogFreshUntil: new Date(at.getTime() + 1) }, at)).toBe(false);
    expect(catalogStale({ catalogFreshUntil: at }, at)).toBe(true);
  });

  it('keeps query semantics only for the exact definition that was marked', () => {
    expect(isLegacyQuery(tool)).toBe(false);
    expect(isLegacyQuery({ ...tool, legacyQueryFingerprint: 'f1' })).toBe(true);
    expect(isLegacyQuery({ ...tool, legacyQueryFingerprint: 'f0' })).toBe(false);
  });

  it('offers a tool under its namespaced name, and says why when it withholds one', () => {
    expect(judgeRemoteTool('docs', open, tool, true)).toEqual({ offer: 'docs__search' });
    expect(judgeRemoteTool('docs', open, { ...tool, removedAt: new Date() }, true)).toEqual({
      absent: true,
    });
    expect(judgeRemoteTool('docs', { ...open, excludedTools: ['search'] }, tool, true)).toEqual({
      withhold: { name: 'docs__search', reason: 'excluded on the docs connection' },
    });
    expect(judgeRemoteTool('docs', open, tool, false)).toEqual({
      withhold: {
        name: 'docs__search',
        reason: 'the docs connection is not scoped to this conversation',
      },
    });
  });

  it('withholds a tool that accepts only task-augmented calls, saying why', () => {
    const taskOnly = { ...tool, definition: { execution: { taskSupport: 'required' } } };
    expect(judgeRemoteTool('docs', open, taskOnly, true)).toEqual({
      withhold: {
        name: 'docs__search',
        reason: 'it accepts only task-augmented calls (MCP tasks), which Mesh does not make',
      },
    });
    for (const taskSupport of ['optional', 'forbidden', undefined]) {
      expect(uncallableReason({ execution: { taskSupport } } as never)).toBeUndefined();
    }
    expect(uncallableReason(undefined)).toBeUndefined();
  });

  it('maps names model providers refuse, deterministically and without collisions', () => {
    const dotted = judgeRemoteTool('docs', open, { ...tool, toolName: 'files.read' }, true);
    expect(dotted).toEqual({ offer: remoteToolName('docs', 'files.read') });
    expect(remoteToolName('docs', 'files.read')).toMatch(/^docs__files_read_[0-9a-f]{8}$/);
    expect(remoteToolName('docs', 'files.read')).toBe(remoteToolName('docs', 'files.read'));
    // `files_read` is valid as it is; the dotted name never lands on it or on `files/read`.
    expect(remoteToolName('docs', 'files_read')).toBe('docs__files_read');
    expect(remoteToolName('docs', 'files/read')).not.toBe(remoteToolName('docs', 'files.read'));
    const long = remoteToolName('a_very_long_provider_slug_here', 'x'.repeat(200));
    expect(long).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    expect(remoteToolName('docs', 'ünïcode')).toMatch(/^docs__[A-Za-z0-9_-]+$/);
  });

  it('offers a tool the server names `*` under a mapped name, never as the catalog’s own entry', () => {
    const star = judgeRemoteTool('docs', open, { ...tool, toolName: '*' }, true);
    expect(star).toEqual({ offer: remoteToolName('docs', '*') });
    expect(remoteToolName('docs', '*')).toMatch(/^docs____[0-9a-f]{8}$/);
    expect(remoteToolName('docs', '*')).not.toBe(unreadableCatalog('docs', 'x').name);
    // Excluded, it is withheld for that reason, not for its name.
    const excluded = judgeRemoteTool(
      'docs',
      { ...open, excludedTools: ['*'] },
      { ...tool, toolName: '*' },
      true,
    );
    expect(excluded).toEqual({
      withhold: { name: remoteToolName('docs', '*'), reason: 'excluded on the docs connection' },
    });
  });

  it('withholds a connection whose catalog cannot be read as one entry, its cause bounded', () => {
    const entry = unreadableCatalog('docs', 'x'.repeat(1000));
    expect(entry.name).toBe('docs__*');
    expect(entry.reason.startsWith('the catalog of docs could not be read: x')).toBe(true);
    expect(entry.reason.length).toBeLessThan(260);
  });
});
