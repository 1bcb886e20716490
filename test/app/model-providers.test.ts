import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { addModelProvider, describeProviders } from '../../src/app/backends/model-providers.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';

describe.each(testDatabases())('model providers on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    mesh = assembleMesh(opened.db, testInstanceKey());
  }, 60_000);

  afterAll(async () => {
    await dispose?.();
  });

  const rows = async (name: string) =>
    (await mesh.db.query('select id from model_providers where name = $1', [name])).rows.length;

  it('adds a provider and its key as one unit: a key that cannot be captured leaves no provider', async () => {
    const input = {
      name: 'half',
      kind: 'openai_compatible' as const,
      baseUrl: 'https://api.example.com/v1',
    };
    // A lone surrogate passes the provider's own checks and is refused by the secret store.
    const refused = await addModelProvider(mesh, { ...input, apiKey: 'sk-\ud800' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(hasCode(refused, 'secret_value_invalid')).toBe(true);
    expect(String((refused as Error).message)).not.toContain('sk-');
    expect(await rows('half')).toBe(0);
    expect(
      (await mesh.db.query("select 1 from secrets where owner_type = 'model_provider'")).rowCount,
    ).toBe(0);

    // Nothing is left behind to collide with: the same name is added cleanly next time.
    const added = await addModelProvider(mesh, { ...input, apiKey: 'sk-good' });
    expect(await rows('half')).toBe(1);
    const described = (await describeProviders(mesh)).find((p) => p.id === added.id);
    expect(described?.apiKey).toMatchObject({ present: true, version: 1 });
  });
});
