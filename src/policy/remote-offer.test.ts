import { describe, expect, it } from 'vitest';
import {
  bindingInScope,
  catalogStale,
  isLegacyQuery,
  judgeRemoteTool,
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
    const odd = judgeRemoteTool('docs', open, { ...tool, toolName: 'a.b' }, true);
    expect(odd).toEqual({
      withhold: {
        name: 'docs__a.b',
        reason: 'the namespaced name is not one model providers accept',
      },
    });
  });

  it('withholds a connection whose catalog cannot be read as one entry, its cause bounded', () => {
    const entry = unreadableCatalog('docs', 'x'.repeat(1000));
    expect(entry.name).toBe('docs__*');
    expect(entry.reason.startsWith('the catalog of docs could not be read: x')).toBe(true);
    expect(entry.reason.length).toBeLessThan(260);
  });
});
