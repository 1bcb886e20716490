import { describe, expect, it } from 'vitest';
import { testDefinition } from '../../test/support/tool.ts';
import { systemClock } from '../tool/clock.ts';
import { serviceKey } from '../tool/context.ts';
import { hasCode } from '../tool/errors.ts';
import { createRegistry } from '../tool/registry.ts';
import type { Db } from '../store/db.ts';
import { MEMORY_STORE } from '../../tools/memory/memory-store.ts';
import { packageServices, SERVICE_FACTORIES } from './service-factories.ts';

const host = { db: {} as Db, clock: systemClock };

describe('packageServices', () => {
  it('provides every service a compiled-in tool declares, building none up front', () => {
    const registry = createRegistry([
      testDefinition('recall', { needs: ['service:mesh.memory.store'] }),
    ]);
    const provided = packageServices({ registry }, host);
    expect(provided.has(MEMORY_STORE)).toBe(true);
    expect(SERVICE_FACTORIES.map((f) => f.key.id)).toContain('mesh.memory.store');
  });

  it('refuses to start when a tool needs a service no factory provides, naming both', () => {
    const registry = createRegistry([
      testDefinition('lookup', { needs: ['service:example.index'] }),
    ]);
    let thrown: unknown;
    try {
      packageServices({ registry }, host);
    } catch (error) {
      thrown = error;
    }
    expect(hasCode(thrown, 'service_unprovided')).toBe(true);
    expect(String((thrown as Error).message)).toBe(
      'tool lookup of package test.package needs service example.index, which this Mesh does not provide',
    );
    expect(packageServices({ registry: createRegistry([]) }, host).has(serviceKey('x.y'))).toBe(
      false,
    );
  });
});
