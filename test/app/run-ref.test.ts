import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { resolveRun, shortRunId } from '../../src/app/runs/run-ref.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';

async function refusal(promise: Promise<unknown>) {
  return promise.then(
    () => {
      throw new Error('expected a refusal');
    },
    (error: unknown) => error as { code: string; message: string; data?: Record<string, unknown> },
  );
}

describe.each(testDatabases())('run ids by prefix on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  const ids = [
    'a1b2c3d4-0000-4000-8000-000000000001',
    'a1b2c3d4-0000-4000-8000-000000000002',
    'a1b2c3d5-0000-4000-8000-000000000003',
  ];

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    mesh = assembleMesh(opened.db, testInstanceKey());
    const agentId = 'b0000000-0000-4000-8000-000000000000';
    await insertAgent(mesh.db, { id: agentId, name: 'ada' });
    for (const id of ids)
      await mesh.db.query(
        `insert into runs (id, agent_id, kind, status, provenance, budget)
         values ($1, $2, 'script', 'succeeded', '{"kind":"operator","operator":"t"}', '{}')`,
        [id, agentId],
      );
  }, 60_000);

  afterAll(async () => {
    await mesh?.close();
    await dispose?.();
  });

  it('finds a run by its whole id, or by a prefix only it has, in either case', async () => {
    expect((await resolveRun(mesh, ids[0] ?? '')).id).toBe(ids[0]);
    expect((await resolveRun(mesh, 'a1b2c3d5')).id).toBe(ids[2]);
    expect((await resolveRun(mesh, 'A1B2C3D4-0000-4000-8000-000000000001')).id).toBe(ids[0]);
    expect(shortRunId(ids[2] ?? '')).toBe('a1b2c3d5');
  });

  it('refuses an ambiguous prefix listing the runs it matches', async () => {
    const e = await refusal(resolveRun(mesh, 'a1b2c3d4'));
    expect(e.code).toBe('run_id_ambiguous');
    expect(e.message).toContain('2 runs have ids starting with a1b2c3d4');
    expect(e.message).toContain(ids[0]);
    expect(e.message).toContain(ids[1]);
    expect(e.data?.['candidates']).toEqual(expect.arrayContaining([ids[0], ids[1]]));
  });

  it('refuses a prefix too short or not shaped like an id, and says when none matches', async () => {
    for (const ref of ['a1b2c3d', 'a1b2c3d4x', 'zzzzzzzz', "a1b2c3d4'; drop", '']) {
      const e = await refusal(resolveRun(mesh, ref, 'path.run'));
      expect(e.code, ref).toBe('invalid_input');
      expect(e.data?.['field']).toBe('path.run');
      expect(e.message).not.toContain(ref || '\u0000');
    }
    expect((await refusal(resolveRun(mesh, 'ffffffff'))).code).toBe('run_not_found');
    expect((await refusal(resolveRun(mesh, 'ffffffff-0000-4000-8000-000000000000'))).code).toBe(
      'run_not_found',
    );
  });
});
