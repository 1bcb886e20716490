import { describe, expect, it } from 'vitest';
import { testDefinition, testRuntime } from '../../test/support/tool.ts';
import { lazyServices, serviceKey, services, servicesDeclared } from './context.ts';
import { execute } from './executor.ts';
import { createRegistry } from './registry.ts';

const INDEX = serviceKey<{ size(): number }>('example.index');
const OTHER = serviceKey<string>('example.other');

describe('lazyServices', () => {
  it('builds each service once, on its first get, from what the host offers', () => {
    let built = 0;
    const provided = lazyServices(
      [
        {
          key: INDEX,
          create: (host: { rows: number }) => {
            built += 1;
            return { size: () => host.rows };
          },
        },
      ],
      { rows: 3 },
    );
    expect(provided.has(INDEX)).toBe(true);
    expect(built).toBe(0);
    expect(provided.get(INDEX).size()).toBe(3);
    expect(provided.get(INDEX)).toBe(provided.get(INDEX));
    expect(built).toBe(1);
  });

  it('refuses two factories for one key, and names a service nobody provides', () => {
    const factory = { key: INDEX, create: () => ({ size: () => 0 }) };
    expect(() => lazyServices([factory, factory], {})).toThrow(/example\.index is provided twice/);
    expect(() => lazyServices([factory], {}).get(OTHER)).toThrow(/example\.other is not available/);
  });
});

describe('servicesDeclared', () => {
  it('shows a tool only the services its needs declare', () => {
    const all = services([
      [INDEX, { size: () => 1 }],
      [OTHER, 'other'],
    ]);
    const scoped = servicesDeclared(all, new Set(['example.index']));
    expect(scoped.get(INDEX).size()).toBe(1);
    expect(scoped.has(OTHER)).toBe(false);
    expect(() => scoped.get(OTHER)).toThrow(/example\.other is not declared in this tool's needs/);
  });

  it('is what the executor hands a handler: an undeclared service fails the call', async () => {
    const all = services([
      [INDEX, { size: () => 7 }],
      [OTHER, 'other'],
    ]);
    const reach = (key: typeof INDEX | typeof OTHER) =>
      testDefinition(`reach_${key.id.replace('.', '_')}`, {
        needs: ['service:example.index'],
        execute: async (ctx) => {
          ctx.services.get<unknown>(key);
          return { text: 'reached' };
        },
      });
    const registry = createRegistry([reach(INDEX), reach(OTHER)]);
    const runtime = { ...testRuntime(), services: all };
    const declared = await execute(
      registry,
      { id: 'c1', name: 'reach_example_index', arguments: '{}' },
      runtime,
    );
    expect(declared.kind).toBe('observation');
    await expect(
      execute(registry, { id: 'c2', name: 'reach_example_other', arguments: '{}' }, runtime),
    ).rejects.toThrow(/example\.other is not declared/);
  });
});
