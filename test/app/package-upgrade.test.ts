import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { autoUpgrade, setAutoUpgrade, sweepDrift } from '../../src/app/packages/drift.ts';
import { driftLines } from '../../src/app/packages/install-operations.ts';
import { installAnswer, lifecycleOf } from '../../src/app/packages/installs.ts';
import { requirePackage } from '../../src/app/packages/packages.ts';
import { loadCatalog } from '../../src/manifest/verify-catalog.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { lifecycleStore } from '../../src/store/lifecycle.ts';
import { listConfigValues, setConfigValue } from '../../src/store/tool-policy.ts';
import { testDatabases } from '../support/db.ts';
import { serverCatalog, withTrackerHook } from '../support/server.ts';
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

    expect(await lifecycle.upgradeDrifted('operator:test')).toBe(1);
    const [upgrade] = await store.history(install?.id ?? '');
    expect(upgrade).toMatchObject({
      action: 'upgrade',
      requestedBy: 'operator:test',
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
    expect(await lifecycle.upgradeDrifted('operator:test')).toBe(0);
  });
});

/**
 * A hook runs only after an operator's action: the sweep records and shows an install Mesh was
 * upgraded under, and moves it (running on_enable) only under an operator's standing instruction,
 * to which the upgrade is then attributed.
 */
describe.each(testDatabases())('drifted installs and the sweep on $name', (database) => {
  let mesh: Mesh;
  let dispose: () => Promise<void>;
  const agentId = 'c0000000-0000-4000-8000-000000000002';
  let registered = 0;

  beforeAll(async () => {
    const opened = await database.open();
    dispose = () => opened.dispose();
    mesh = assembleMesh(opened.db, testInstanceKey(), {
      catalog: loadCatalog(
        withTrackerHook(serverCatalog(), 'registerWebhook', async () => {
          registered++;
          return { kind: 'success' as const, state: {} };
        }),
      ),
    });
    await insertAgent(mesh.db, { id: agentId, name: 'ada' });
  }, 60_000);
  afterAll(async () => {
    await mesh.close();
    await dispose();
  });

  it('records and shows the drift, runs no hook without the setting, and upgrades as the operator who set it', async () => {
    const lifecycle = lifecycleOf(mesh);
    await lifecycle.request({
      agentId,
      packageId: 'example.tracker',
      action: 'enable',
      actor: 'operator:grace',
    });
    expect(registered).toBe(1);
    const store = lifecycleStore(mesh.db);
    const install = await store.findInstall(agentId, 'example.tracker');
    // As if Mesh had run an older example.tracker when it was enabled.
    await mesh.db.query(
      `update package_installs set package_version = '0.9.0', package_digest = $2 where id = $1::uuid`,
      [install?.id, `sha256:${'2'.repeat(64)}`],
    );
    const pkg = requirePackage(mesh, 'example.tracker');

    // No standing instruction: the sweep records the drift and runs nothing.
    expect(await autoUpgrade(mesh)).toEqual({ enabled: false, set_by: null, set_at: null });
    expect(await sweepDrift(mesh)).toEqual({ drifted: 1, newlySeen: 1, upgraded: 0 });
    expect(await sweepDrift(mesh)).toEqual({ drifted: 1, newlySeen: 0, upgraded: 0 });
    expect(registered).toBe(1);
    expect((await store.history(install?.id ?? '')).map((t) => t.action)).toEqual(['enable']);
    const shown = await installAnswer(mesh, agentId, pkg);
    expect(shown).toMatchObject({
      state: 'enabled',
      pinned: { version: '0.9.0' },
      drift: { running_version: pkg.manifest.package.version, running_digest: pkg.digest },
    });
    expect(shown.drift?.seen_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    expect(driftLines(shown, 'ada')).toEqual([
      expect.stringMatching(
        /^ {2}drifted: pinned to 0\.9\.0, running \S+ \(seen \S+\); upgrade it \(runs on_enable\): mesh packages upgrade example\.tracker --agent ada$/,
      ),
    ]);

    // An operator's standing instruction: the next sweep upgrades, attributed to it.
    const given = await setAutoUpgrade(mesh, true, 'operator:grace');
    expect(given).toMatchObject({ enabled: true, set_by: 'operator:grace' });
    expect(await sweepDrift(mesh)).toEqual({ drifted: 1, newlySeen: 0, upgraded: 1 });
    expect(registered).toBe(2);
    const [, upgrade] = await store.history(install?.id ?? '');
    expect(upgrade).toMatchObject({
      action: 'upgrade',
      outcome: 'succeeded',
      requestedBy: `operator:grace (standing instruction of ${given.set_at ?? ''})`,
    });
    expect((await installAnswer(mesh, agentId, pkg)).drift).toBeNull();
    expect(await sweepDrift(mesh)).toEqual({ drifted: 0, newlySeen: 0, upgraded: 0 });
    expect((await store.findInstall(agentId, 'example.tracker'))?.driftSeenAt).toBeNull();

    // Withdrawn, it stays off for the next drift.
    await setAutoUpgrade(mesh, false, 'operator:grace');
    expect(await autoUpgrade(mesh)).toMatchObject({ enabled: false, set_by: 'operator:grace' });
  });
});
