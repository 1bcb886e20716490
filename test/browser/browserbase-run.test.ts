import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentBudgetOperation } from '../../src/app/agents/budget-operation.ts';
import { browserAdmin, grantBrowserBackend } from '../../src/app/backends/browser-admin.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import { showRunOperation } from '../../src/app/runs/operations.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { startBrowserbaseFake, type BrowserbaseFake } from '../support/browserbase-fake.ts';
import { testDatabases } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { startTestSite, type TestSite } from '../support/test-site.ts';
import { fakeModelAgent, testInstanceKey } from '../support/turn.ts';

const BB_KEY = `bb_live_${randomUUID()}`;

/*
 * A run on a Browserbase backend (its loopback fake, through the official SDK): the session is
 * created for the run, its live-view link is on the run, the run's end releases it (the vendor saw
 * the release), and the vendor's recording is stored as the run's artifact and linked from it.
 */
describe.each(testDatabases())('a run browsing on Browserbase on $name', (database) => {
  let mesh: Mesh;
  let model: FakeChatCompletions;
  let site: TestSite;
  let bb: BrowserbaseFake;
  let agentId: string;
  let dispose: () => Promise<void>;
  const caller = { actor: 'operator:test' };

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    [model, site, bb] = await Promise.all([
      startFakeChatCompletions(),
      startTestSite(),
      startBrowserbaseFake({ apiKey: BB_KEY }),
    ]);
    dispose = async () => {
      await mesh.close();
      await opened.dispose();
      await Promise.all([model.close(), site.close(), bb.close()]);
    };
    agentId = await fakeModelAgent(mesh, model.baseUrl, 'scout');
    await invokeOperation(mesh, agentBudgetOperation, { agent: 'scout', rounds: 6 }, caller);
  }, 60_000);

  afterAll(async () => {
    await dispose?.();
  });

  it('refuses a vendor backend without its key, or on plain http without --dev, naming what', async () => {
    const noKey = await browserAdmin
      .add(mesh, { name: 'bb0', kind: 'browserbase' })
      .catch((e: unknown) => e);
    expect(hasCode(noKey, 'invalid_backend')).toBe(true);
    expect((noKey as Error).message).toContain('needs its API key (`api_key`)');
    const plain = await browserAdmin
      .add(mesh, {
        name: 'bb0',
        kind: 'browserbase',
        api_key: BB_KEY,
        base_url: bb.baseUrl,
      })
      .catch((e: unknown) => e);
    expect((plain as Error).message).toContain('plain http only to loopback, with `development`');
    expect(JSON.stringify(plain)).not.toContain(BB_KEY);
  });

  it('provisions on the first browser call, shows where to watch it, releases it and keeps its recording', async () => {
    await browserAdmin.add(mesh, {
      name: 'bb',
      kind: 'browserbase',
      api_key: BB_KEY,
      base_url: bb.baseUrl,
      development: true,
    });
    await grantBrowserBackend(mesh, {
      agent: 'scout',
      backend: 'bb',
      allowLoopback: false,
      operator: 'operator:test',
    });
    const call = (id: string, name: string, args: object) => ({
      kind: 'completion' as const,
      content: null,
      toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
    });
    model.enqueue(
      call('n1', 'browser_navigate', { url: site.url }),
      call('r1', 'browser_read', { mode: 'text' }),
      { kind: 'completion', content: 'Acme answers within a day.' },
    );
    const ended = await chat(mesh, { agentId, actor: 'user:grace', body: 'how fast is acme?' });
    expect(ended.status).toBe('succeeded');
    expect(ended.reply).toBe('Acme answers within a day.');

    // The vendor saw one session for this run, and its release.
    const [session] = [...bb.sessions.values()].filter(
      (s) => s.metadata['mesh_run'] === ended.runId,
    );
    expect(session?.released).toBe(true);
    const shown = await invokeOperation(mesh, showRunOperation, { run: ended.runId }, caller);
    expect(shown.browser_sessions).toHaveLength(1);
    const [row] = shown.browser_sessions ?? [];
    expect(row).toMatchObject({ state: 'released', release_reason: 'its run ended' });
    expect(row?.live_view_url).toMatch(/\/devtools\/inspector\.html\?sessionId=.*fullscreen=1$/);
    const artifact = await mesh.ledger.artifact(ended.runId, row?.recording_artifact_id ?? '');
    expect(artifact?.mediaType).toBe('application/json');
    const events = JSON.parse(Buffer.from(artifact?.content ?? []).toString()) as unknown[];
    expect(events.length).toBeGreaterThan(0);
    // What was typed into a field is not kept: only its length.
    const text = Buffer.from(artifact?.content ?? []).toString();
    expect(text).not.toContain('hunter2-typed');
    const typed = (events as { type?: number; data?: { source?: number; text?: string } }[]).find(
      (e) => e.type === 3 && e.data?.source === 5,
    );
    expect(typed?.data?.text).toBe('*'.repeat(13));
    // The key reached the vendor and no row of ours.
    const { rows } = await mesh.db.query<{ text: string }>(
      `select coalesce(release_reason, '') || coalesce(live_view_url, '') || coalesce(external_id, '') as text from browser_sessions`,
    );
    expect(rows.map((r) => r.text).join(' ')).not.toContain(BB_KEY);
  }, 60_000);
});
