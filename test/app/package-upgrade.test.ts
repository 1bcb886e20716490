import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembleMesh, type Mesh } from '../../src/app/mesh.ts';
import { lifecycleOf } from '../../src/app/packages/installs.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { lifecycleStore } from '../../src/store/lifecycle.ts';
import { listConfigValues, setConfigValue } from '../../src/store/tool-policy.ts';
import { testDatabases } from '../support/db.ts';
import { testInstanceKey } from '../support/turn.ts';

/**
 * Mesh was upgraded under an enabled install: the sweep moves it to the package now running as
 * an explicit transition, migrating its stored config to what the running manifest declares.
 */
describe.each(testDatabases())('a package upgrade under an install on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  const agentId = 'c0000000-0000-4000-8000-000000000001';

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    mesh = assembleMesh(opened.db, testInstanceKey());
    await insertAgent(mesh.db, { id: agentId, name: 'ada' });
  }, 60_000);
  afterAll(async () => {
    await mesh.close();
    await dispose();
  });

  it('is a transition that re-pins the install and migrates its config, keys named, values not', async () => {
    const lifecycle = lifecycleOf(mesh);
    // mesh.slack has no hooks: its install starts enabled, and is recorded once touched.
    await lifecycle.request({ agentId, packageId: 'mesh.slack', action: 'enable', actor: 'op' });
    const store = lifecycleStore(mesh.db);
    const install = await store.findInstall(agentId, 'mesh.slack');
    expect(install?.state).toBe('enabled');
    // What an older mesh.slack left: a key it no longer has, a value it no longer accepts.
    await setConfigValue(mesh.db, agentId, 'mesh.slack', 'retired_channel', 'C0SECRETVALUE');
    await setConfigValue(mesh.db, agentId, 'mesh.slack', 'api_url', 42);
    await setConfigValue(mesh.db, agentId, 'mesh.slack', 'allow_loopback_http', true);
    await mesh.db.query(
      `update package_installs set package_version = '0.9.0', package_digest = $2 where id = $1::uuid`,
      [install?.id, `sha256:${'1'.repeat(64)}`],
    );

    expect(await lifecycle.upgradeDrifted()).toBe(1);
    const [upgrade] = await store.history(install?.id ?? '');
    expect(upgrade).toMatchObject({
      action: 'upgrade',
      requestedBy: 'mesh',
      outcome: 'succeeded',
      packageVersion: '1.0.0',
    });
    expect(upgrade?.detail).toMatch(/^upgraded from 0\.9\.0 \(sha256:1{12}…\) to 1\.0\.0 \(/);
    expect(upgrade?.detail).toContain(
      '; config: reset api_url to its default (its value is no longer valid), dropped retired_channel (no longer declared)',
    );
    expect(upgrade?.detail).not.toContain('C0SECRETVALUE');
    const left = (await listConfigValues(mesh.db, agentId)).filter(
      (r) => r.packageId === 'mesh.slack',
    );
    expect(left.map((r) => [r.key, r.value])).toEqual([['allow_loopback_http', true]]);
    expect(await store.findInstall(agentId, 'mesh.slack')).toMatchObject({
      packageVersion: '1.0.0',
      packageDigest: mesh.catalog.packages.find((p) => p.manifest.package.id === 'mesh.slack')
        ?.digest,
    });
    expect(await lifecycle.upgradeDrifted()).toBe(0);
  });
});
