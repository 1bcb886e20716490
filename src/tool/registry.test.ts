import { describe, expect, it } from 'vitest';
import { hasCode } from './errors.ts';
import { createRegistry, RegistryError } from './registry.ts';
import { testDefinition, testOrigin } from '../../test/support/tool.ts';
import type { Definition } from './definition.ts';

function refusal(definitions: Definition[]): RegistryError {
  try {
    createRegistry(definitions);
  } catch (error) {
    expect(hasCode(error, RegistryError.code)).toBe(true);
    return error as RegistryError;
  }
  throw new Error('expected the registry to refuse');
}

describe('createRegistry', () => {
  it('holds a definition it met before as the same frozen copy, in every registry it builds', () => {
    const search = testDefinition('search');
    const first = createRegistry([search]);
    const second = createRegistry([testDefinition('fetch'), search]);
    const copy = first.get('search');
    expect(Object.isFrozen(copy)).toBe(true);
    expect(second.get('search')).toBe(copy);
    // A registry built from another's definitions (a turn's, from the catalog's) holds them as
    // they are.
    expect(createRegistry(second.definitions()).get('search')).toBe(copy);
    // A name clash is refused however often its definitions were accepted alone.
    expect(refusal([search, copy as Definition]).message).toContain('duplicate name');
  });

  it('refuses duplicate names, naming both origins', () => {
    const other = { ...testOrigin, packageId: 'other.package', version: '2.1.0' };
    const error = refusal([testDefinition('search'), testDefinition('search', { origin: other })]);
    expect(error.message).toContain('duplicate name');
    expect(error.message).toContain('test.package@1.0.0');
    expect(error.message).toContain('other.package@2.1.0');
  });

  it.each(['', 'has space', 'dots.in.name', 'x'.repeat(65), 'ünïcode', 'slash/name'])(
    'refuses the provider-unsafe name %j',
    (name) => {
      expect(refusal([testDefinition(name)]).message).toContain('^[a-zA-Z0-9_-]{1,64}$');
    },
  );

  it('accepts names providers accept', () => {
    expect(
      createRegistry([
        testDefinition('a'),
        testDefinition('x'.repeat(64)),
        testDefinition('linear__create-issue_2'),
      ]).size,
    ).toBe(3);
  });

  it('refuses absent parameters and parameters that are not an object schema', () => {
    const absent = testDefinition('a');
    const noParams = { ...absent, tool: { name: 'a', description: '' } } as unknown as Definition;
    expect(refusal([noParams]).message).toContain('parameters are absent');
    expect(refusal([testDefinition('b', { parameters: { type: 'string' } })]).message).toContain(
      'top level is {"type": "object"}',
    );
    const arraySchema = testDefinition('c', { parameters: [] as never });
    expect(refusal([arraySchema]).message).toContain('top level is {"type": "object"}');
  });

  it('refuses schemas that are not valid JSON Schema 2020-12', () => {
    expect(
      refusal([
        testDefinition('a', {
          parameters: { type: 'object', properties: { n: { type: 'integr' } } },
        }),
      ]).message,
    ).toContain('not valid JSON Schema 2020-12');
    expect(
      refusal([testDefinition('b', { parameters: { type: 'object', requried: ['x'] } })]).message,
    ).toContain('unknown keyword');
    expect(
      refusal([
        testDefinition('c', {
          parameters: { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' },
        }),
      ]).message,
    ).toContain('only JSON Schema 2020-12');
    expect(
      refusal([testDefinition('d', { parameters: { type: 'object' }, outputSchema: { type: 7 } })])
        .message,
    ).toContain('output schema');
  });

  it('reads remote schemas leniently about unknown keywords but not about validity', () => {
    const remote = { ...testOrigin, source: 'remote' as const, packageId: 'mcp.linear' };
    expect(
      createRegistry([
        testDefinition('a', { origin: remote, parameters: { type: 'object', 'x-ui': 1 } }),
      ]).size,
    ).toBe(1);
    expect(
      refusal([
        testDefinition('b', {
          origin: remote,
          parameters: { type: 'object', properties: 3 },
        }),
      ]).message,
    ).toContain('not valid JSON Schema');
  });

  it('refuses internal replay outside Mesh-owned packages', () => {
    expect(refusal([testDefinition('a', { replay: 'internal' })]).message).toContain(
      'internal replay is reserved',
    );
    const memory = { ...testOrigin, packageId: 'mesh.memory' };
    expect(
      createRegistry([
        testDefinition('remember', { replay: 'internal', class: 'query', origin: memory }),
      ]).size,
    ).toBe(1);
    const impostor = { ...memory, source: 'remote' as const };
    expect(
      refusal([testDefinition('b', { replay: 'internal', origin: impostor })]).message,
    ).toContain('internal replay');
  });

  it('refuses unknown classes, replays and malformed needs', () => {
    const error = refusal([
      testDefinition('a', {
        class: 'shell' as never,
        replay: 'sometimes' as never,
        needs: ['secret:', 'gpu'] as never,
      }),
    ]);
    expect(error.message).toContain('class must be one of');
    expect(error.message).toContain('replay must be one of');
    expect(error.message).toContain('need "gpu"');
    expect(error.problems.length).toBe(4);
  });

  it('is frozen, definitions included', () => {
    const registry = createRegistry([testDefinition('a'), testDefinition('b')]);
    expect(Object.isFrozen(registry)).toBe(true);
    expect(Object.isFrozen(registry.tools())).toBe(true);
    const definition = registry.get('a');
    expect(definition && Object.isFrozen(definition)).toBe(true);
    expect(definition && Object.isFrozen(definition.tool.parameters)).toBe(true);
    expect(() => {
      (registry.tools() as unknown as unknown[]).push(1);
    }).toThrow();
  });

  it('select returns a reduced registry whose schemas and lookup agree', () => {
    const registry = createRegistry([
      testDefinition('read', { class: 'query' }),
      testDefinition('post', { class: 'effect', replay: 'effectful' }),
      testDefinition('exec', { class: 'workspace', replay: 'effectful', needs: ['workspace'] }),
    ]);
    const reads = registry.select((d) => d.class === 'query');
    expect(reads.tools().map((t) => t.name)).toEqual(['read']);
    expect(reads.get('read')).toBe(registry.get('read'));
    expect(reads.get('post')).toBeUndefined();
    expect(registry.size).toBe(3);
    expect(reads.select(() => true).names()).toEqual(['read']);
    expect(Object.isFrozen(reads)).toBe(true);
  });
});
