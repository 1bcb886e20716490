import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentBudgetOperation } from '../../src/app/agents/budget-operation.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import { testDatabases } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { processAlive } from '../support/process.ts';
import { startTestSite, type TestSite } from '../support/test-site.ts';
import { fakeModelAgent, grantLocalBrowser, testInstanceKey } from '../support/turn.ts';

/*
 * Issue 19, item 7: a run's browser session time is a meter. A run whose session has been held
 * past the agent's session-minutes ends as budget-exhausted at its next browser call, with the
 * reason told to the conversation, and its session is released (the Chromium process is gone).
 * The session's start is moved back in its row rather than waited out: the meter reads the rows.
 */
describe.each(testDatabases())('browser session time on $name', (database) => {
  let mesh: Mesh;
  let model: FakeChatCompletions;
  let site: TestSite;
  let agentId: string;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const opened = await database.open();
    mesh = assembleMesh(opened.db, testInstanceKey());
    [model, site] = await Promise.all([startFakeChatCompletions(), startTestSite()]);
    dispose = async () => {
      await mesh.close();
      await opened.dispose();
      await model.close();
      await site.close();
    };
    agentId = await fakeModelAgent(mesh, model.baseUrl, 'surfer');
    const caller = { actor: 'operator:test' };
    await invokeOperation(
      mesh,
      agentBudgetOperation,
      { agent: 'surfer', rounds: 6, session_minutes: 1 },
      caller,
    );
    await grantLocalBrowser(mesh, 'surfer');
  }, 60_000);

  afterAll(async () => {
    await dispose?.();
  });

  it('ends the run as budget-exhausted once its session time is spent, and releases the session', async () => {
    const call = (id: string, name: string, args: object) => ({
      kind: 'completion' as const,
      content: null,
      toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
    });
    // Before the second request is answered, the session is made two minutes old.
    const aged = model.waitForRequests(2).then(async () => {
      const { rowCount } = await mesh.db.query(
        `update browser_sessions set ready_at = now() - interval '2 minutes',
           created_at = now() - interval '2 minutes' where agent_id = $1 and state = 'ready'`,
        [agentId],
      );
      expect(rowCount).toBe(1);
      const { rows } = await mesh.db.query<{ external_id: string }>(
        `select external_id from browser_sessions where agent_id = $1`,
        [agentId],
      );
      return Number(rows[0]?.external_id.split(':')[0]);
    });
    model.enqueue(call('n1', 'browser_navigate', { url: site.url }), {
      kind: 'after',
      gate: aged,
      reply: call('r1', 'browser_read', {}),
    });

    const ended = await chat(mesh, { agentId, actor: 'user:grace', body: 'look at acme' });
    expect(ended.status).toBe('budget_exhausted');
    expect(ended.reason).toBe('budget exhausted: browser session time (1 min) spent');
    // Released: the row says so and the Chromium process is gone.
    const { rows } = await mesh.db.query<{ state: string; release_reason: string }>(
      'select state, release_reason from browser_sessions where agent_id = $1',
      [agentId],
    );
    expect(rows).toEqual([
      { state: 'released', release_reason: 'the run’s browser session time is spent' },
    ]);
    const pid = await aged;
    await expect.poll(() => processAlive(pid)).toBe(false);
    // The conversation is told which limit and how to raise it.
    const { rows: messages } = await mesh.db.query<{ body: string }>(
      `select body from messages where conversation_id = $1 and direction = 'outbound'`,
      [ended.conversationId],
    );
    expect(messages.at(-1)?.body).toContain('browser session time (1 min) spent');
    expect(messages.at(-1)?.body).toContain('--session-minutes N');
    // The navigation is on record; the read found the budget spent.
    const run = await mesh.ledger.run(ended.runId);
    expect((run?.usage['sessionMs'] as number) >= 60_000).toBe(true);
  }, 60_000);
});
