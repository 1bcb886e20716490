import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HookOutcome } from '../../src/tool/hook.ts';
import { testDatabases } from '../support/db.ts';
import {
  postForm,
  serverCatalog,
  signIn,
  startTestServer,
  type TestServer,
  withTrackerHook,
} from '../support/server.ts';
import { scriptedAgent } from '../support/turn.ts';

/**
 * An install parked in error, settled through the faces: the API shows its task, the Tools tab
 * offers Retry and Abandon, and each form moves it through the lifecycle executor.
 */
describe.each(testDatabases())(
  'package installs through the API and the UI on $name',
  (database) => {
    let server: TestServer;
    let dispose: () => Promise<void> = () => Promise.resolve();
    /** What the tracker's on_disable answers next (then it succeeds). */
    const teardown: HookOutcome[] = [];
    let removals = 0;

    beforeAll(async () => {
      const opened = await database.open();
      server = await startTestServer(opened.db, {
        catalog: withTrackerHook(serverCatalog(), 'removeWebhook', async () => {
          removals++;
          return teardown.shift() ?? { kind: 'success' as const, state: {} };
        }),
      });
      dispose = async () => {
        await server.close();
        await opened.dispose();
      };
      await scriptedAgent(server.mesh, { rules: [], fallback: { content: 'Hello.' } }, 'ops');
    }, 60_000);
    afterAll(() => dispose());

    const path = '/api/agents/ops/packages/example.tracker';

    it('parks a refused teardown in error with a task, shown by the API and settled by a form', async () => {
      expect((await server.api('POST', `${path}/enable`)).json).toMatchObject({ state: 'enabled' });
      teardown.push({ kind: 'terminal', reason: 'the tracker refused to delete the webhook' });
      // A failed transition is a failure on every face: 502 with its typed reason and the way to
      // settle it; the install and its task are on record all the same.
      const failed = await server.api('POST', `${path}/disable`);
      expect(failed.status).toBe(502);
      expect(failed.json).toMatchObject({
        error: {
          code: 'transition_failed',
          message:
            'disable transition of example.tracker for ops failed: the tracker refused to delete the webhook; ' +
            'the install is in error with a compensation task: settle it with mesh packages compensate example.tracker --agent ops --how retry|abandon',
          retryable: false,
        },
      });
      expect((await server.api('GET', `${path}/install`)).json).toMatchObject({
        state: 'error',
        offered: false,
        transitions: [{ action: 'enable' }, { action: 'disable', outcome: 'failed' }],
        compensations: [
          { action: 'disable', state: 'open', reason: 'the tracker refused to delete the webhook' },
        ],
      });

      // The Tools tab shows the task with its two buttons.
      const { cookie, csrf } = await signIn(server);
      const page = await (
        await fetch(`${server.url}agents/ops/tools`, { headers: { cookie } })
      ).text();
      expect(page).toContain('data-install-state="error"');
      expect(page).toContain('disable failed: the tracker refused to delete the webhook');
      expect(page).toContain('Retry disable');
      expect(page).toContain('Abandon');

      // A form with a made-up way is refused, naming the field; nothing moves.
      const form = (how: string) =>
        postForm(server, { cookie, csrf }, 'agents/ops/packages/example.tracker/compensate', {
          how,
        });
      const bad = await server.api('POST', `${path}/compensate`, { how: 'ignore' });
      expect(bad.status).toBe(400);
      expect(bad.text).toContain('body.how');
      expect((await server.api('GET', `${path}/install`)).json).toMatchObject({ state: 'error' });

      // Retry from the Tools tab: the teardown runs again and the install is disabled.
      const retried = await form('retry');
      expect(retried.status).toBe(303);
      const after = (await server.api('GET', `${path}/install`)).json as {
        state: string;
        transitions: { action: string; outcome: string; requested_by: string }[];
        compensations: { state: string; resolved_by: string }[];
      };
      expect(after.state).toBe('disabled');
      expect(after.transitions.map((t) => [t.action, t.outcome])).toEqual([
        ['enable', 'succeeded'],
        ['disable', 'failed'],
        ['disable', 'succeeded'],
      ]);
      expect(after.compensations).toMatchObject([{ state: 'retried' }]);
      expect(removals).toBe(2);

      // Nothing is left to settle: the API says so with its code.
      const none = await server.api('POST', `${path}/compensate`, { how: 'retry' });
      expect(none.status).toBe(409);
      expect(none.json).toMatchObject({ error: { code: 'no_compensation' } });
    });

    it('abandons a task from the API: the install is disabled and the record names who accepted it', async () => {
      await server.api('POST', `${path}/enable`);
      teardown.push({ kind: 'terminal', reason: 'the tracker is gone' });
      expect((await server.api('POST', `${path}/disable`)).status).toBe(502);
      const abandoned = await server.api('POST', `${path}/compensate`, { how: 'abandon' });
      expect(abandoned.json).toMatchObject({
        state: 'disabled',
        compensations: [{ state: 'retried' }, { state: 'abandoned' }],
      });
      const last = (
        abandoned.json as { transitions: { action: string; requested_by: string }[] }
      ).transitions.at(-1);
      expect(last?.action).toBe('abandon');
      expect(last?.requested_by).toMatch(/^operator:/);
      // Checking what is not enabled is refused with its code.
      const check = await server.api('POST', `${path}/check`);
      expect(check.status).toBe(409);
      expect(check.json).toMatchObject({ error: { code: 'install_not_enabled' } });
    });

    it('shows a drifted install on the API and the Tools tab, upgraded by the operator from a form', async () => {
      await server.api('POST', `${path}/enable`);
      const { rows } = await server.mesh.db.query<{ id: string }>(
        `update package_installs set package_version = '0.9.0', package_digest = $1
          where package_id = 'example.tracker' returning id`,
        [`sha256:${'3'.repeat(64)}`],
      );
      expect(rows).toHaveLength(1);
      const drifted = (await server.api('GET', `${path}/install`)).json as {
        drift: { running_version: string } | null;
        pinned: { version: string };
      };
      expect(drifted.pinned.version).toBe('0.9.0');
      expect(drifted.drift?.running_version).toMatch(/^\d+\.\d+\.\d+/);
      // Off until an operator says otherwise, and then attributed to them.
      expect((await server.api('GET', '/api/auto-upgrade')).json).toEqual({
        enabled: false,
        set_by: null,
        set_at: null,
      });
      const bad = await server.api('PUT', '/api/auto-upgrade', { enabled: 'yes' });
      expect(bad.status).toBe(400);
      expect(bad.text).toContain('enabled');

      const { cookie, csrf } = await signIn(server);
      const page = await (
        await fetch(`${server.url}agents/ops/tools`, { headers: { cookie } })
      ).text();
      expect(page).toContain(`data-drift="${drifted.drift?.running_version ?? ''}"`);
      expect(page).toContain(`Upgrade to ${drifted.drift?.running_version ?? ''}`);
      const upgraded = await postForm(
        server,
        { cookie, csrf },
        'agents/ops/packages/example.tracker/upgrade',
      );
      expect(upgraded.status).toBe(303);
      const after = (await server.api('GET', `${path}/install`)).json as {
        drift: unknown;
        transitions: { action: string; outcome: string; requested_by: string }[];
      };
      expect(after.drift).toBeNull();
      expect(after.transitions.at(-1)).toMatchObject({ action: 'upgrade', outcome: 'succeeded' });
      expect(after.transitions.at(-1)?.requested_by).toMatch(/^operator:/);
      const given = (await server.api('PUT', '/api/auto-upgrade', { enabled: true })).json as {
        enabled: boolean;
        set_by: string;
      };
      expect(given.enabled).toBe(true);
      expect(given.set_by).toMatch(/^operator:/);
    });
  },
);
