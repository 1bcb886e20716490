import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprint, remoteDefinition } from './fingerprint.ts';

describe('remote definition fingerprints', () => {
  const tool = {
    name: 'search',
    description: 'Search issues',
    inputSchema: { type: 'object', properties: { q: { type: 'string' }, a: { type: 'number' } } },
    annotations: { readOnlyHint: true, title: 'Search' },
  };

  it('does not depend on key order', () => {
    const shuffled = {
      annotations: { title: 'Search', readOnlyHint: true },
      inputSchema: { properties: { a: { type: 'number' }, q: { type: 'string' } }, type: 'object' },
      description: 'Search issues',
      name: 'search',
    };
    expect(canonicalJson(remoteDefinition(shuffled))).toBe(canonicalJson(remoteDefinition(tool)));
    expect(fingerprint(remoteDefinition(shuffled))).toBe(fingerprint(remoteDefinition(tool)));
  });

  it('changes with any field of the definition, annotations and _meta included', () => {
    const base = fingerprint(remoteDefinition(tool));
    for (const changed of [
      { ...tool, description: 'Search all issues' },
      { ...tool, annotations: { readOnlyHint: false, title: 'Search' } },
      { ...tool, outputSchema: { type: 'object' } },
      { ...tool, icons: [{ src: 'https://example.test/i.png' }] },
      { ...tool, _meta: { version: 2 } },
      { ...tool, execution: { taskSupport: 'optional' } },
      { ...tool, title: 'Search' },
    ]) {
      expect(fingerprint(remoteDefinition(changed))).not.toBe(base);
    }
  });

  it('keeps only the definition fields', () => {
    expect(Object.keys(remoteDefinition({ ...tool, extra: 1 }))).toEqual([
      'name',
      'description',
      'inputSchema',
      'annotations',
    ]);
  });
});
