import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentBudgetOperation } from '../../src/app/agents/budget-operation.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import { answerRunOperation } from '../../src/app/runs/answer-operation.ts';
import { stepJson } from '../../src/app/views.ts';
import { catalog } from '../../src/generated/catalog.ts';
import type { Db } from '../../src/store/db.ts';
import { testDatabases } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
  type FakeReply,
} from '../support/fake-chat-completions.ts';
import { startTestSite, type TestSite } from '../support/test-site.ts';
import { fakeModelAgent, grantLocalBrowser, testInstanceKey } from '../support/turn.ts';

const say = (content: string): FakeReply => ({ kind: 'completion', content });
const call = (id: string, name: string, args: object): FakeReply => ({
  kind: 'completion',
  content: null,
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});

/** The tool results of the last model request, in order. */
function toolResults(model: FakeChatCompletions): string[] {
  const last = model.requests.at(-1)?.json as { messages: { role: string; content: unknown }[] };
  return last.messages.filter((m) => m.role === 'tool').map((m) => String(m.content));
}

/*
 * Issue 19's handoff through the API, across processes: the run parks with its session handed to
 * the conversation, and is handed back and resumed by another Mesh over the same database (as a
 * second replica would), which reconnects to the same browser instead of renting a new one: the
 * page the agent left, with the field it filled, is where the run goes on.
 */
describe.each(testDatabases())(
  'a browser handoff resumed by another process on $name',
  (database) => {
    let first: Mesh;
    let second: Mesh;
    let model: FakeChatCompletions;
    let site: TestSite;
    let agentId: string;
    let dispose: () => Promise<void>;

    beforeAll(async () => {
      const opened = await database.open();
      const key = testInstanceKey();
      first = assembleMesh(opened.db, key);
      // The second Mesh shares the database, and leaves closing it to the first.
      const shared: Db = Object.assign(Object.create(opened.db) as Db, { close: async () => {} });
      second = assembleMesh(shared, key);
      [model, site] = await Promise.all([startFakeChatCompletions(), startTestSite()]);
      dispose = async () => {
        await second.close();
        await first.close();
        await opened.dispose();
        await model.close();
        await site.close();
      };
      agentId = await fakeModelAgent(first, model.baseUrl, 'surfer');
      const operator = { actor: 'operator:test' };
      await invokeOperation(first, agentBudgetOperation, { agent: 'surfer', rounds: 8 }, operator);
      await grantLocalBrowser(first, 'surfer');
    }, 60_000);

    afterAll(async () => {
      await dispose?.();
    }, 60_000);

    const sessions = async (runId: string) =>
      (
        await first.db.query<{ id: string; state: string; holder: string; taken_over_by: string }>(
          `select id, state, holder, taken_over_by from browser_sessions where run_id = $1 order by created_at`,
          [runId],
        )
      ).rows;

    it('tells the model why a handoff cannot happen before a page is open, and the run goes on', async () => {
      model.enqueue(
        call('h0', 'browser_handoff', { reason: 'log in' }),
        say('I could not hand the browser over.'),
      );
      const ended = await chat(first, { agentId, actor: 'user:grace', body: 'log in for me' });
      expect(ended.status).toBe('succeeded');
      expect(toolResults(model)).toEqual([
        'The browser cannot be handed over: the run has no browser session open: open the page a person should act on (browser_navigate), then hand it over',
      ]);
      const { rows } = await first.db.query<{ status: string }>(
        `select status from run_steps where run_id = $1 and kind = 'tool_call'`,
        [ended.runId],
      );
      expect(rows).toEqual([{ status: 'refused' }]);
    }, 60_000);

    it('parks with the session handed over, and another process resumes the run in the same session', async () => {
      model.enqueue(
        call('n1', 'browser_navigate', { url: `${site.url}contact` }),
        call('r1', 'browser_read', {}),
        call('t1', 'browser_act', { action: 'type', ref: 'e1', text: 'Ada' }),
        call('h1', 'browser_handoff', { reason: 'solve the captcha' }),
      );
      const parked = await chat(first, {
        agentId,
        audience: 'shared',
        actor: 'user:grace',
        body: 'send the contact form',
      });
      expect(parked.status).toBe('awaiting_input');
      expect(parked.reason).toMatch(
        /^waiting for a person to take its browser over and hand it back/,
      );
      const [session] = await sessions(parked.runId);
      expect(session?.state).toBe('awaiting_human');
      const link = `/browser-sessions/${session?.id}/live`;
      const { rows: posted } = await first.db.query<{ body: string }>(
        `select body from messages where conversation_id = $1 and direction = 'outbound'`,
        [parked.conversationId],
      );
      expect(posted.at(-1)?.body).toContain(`Take the browser over in Live View: ${link}`);
      const { rows: questions } = await first.db.query(
        `select kind, link, state from run_questions where run_id = $1`,
        [parked.runId],
      );
      expect(questions).toEqual([{ kind: 'browser_handoff', link, state: 'open' }]);

      // Grace hands it back through the other Mesh, which resumes the run there.
      model.enqueue(call('r2', 'browser_read', {}), say('The form is filled in; sending it next.'));
      const resumed = await invokeOperation(
        second,
        answerRunOperation,
        { run: parked.runId, body: 'captcha solved', wait: 60 },
        { actor: 'user:grace' },
      );
      expect(resumed).toMatchObject({
        reason: null,
        status: 'succeeded',
        answered_by: 'user:grace',
      });
      const results = toolResults(model);
      expect(results.at(-2)).toBe(
        'user:grace took the browser over and handed it back: captcha solved\nThe page may have changed: read it again before acting.',
      );
      // The same browser, on the page the agent left: its name field is still filled.
      expect(results.at(-1)).toMatch(/Contact[\s\S]*textbox "Your name".*filled/);
      // Released with its run's end (by the Mesh that ended it).
      await expect.poll(async () => (await sessions(parked.runId))[0]?.state).toBe('released');
      const after = await sessions(parked.runId);
      expect(after).toHaveLength(1);
      expect(after[0]).toMatchObject({
        id: session?.id,
        state: 'released',
        taken_over_by: 'user:grace',
      });
      expect(after[0]?.holder).not.toBe(session?.holder);

      // Every call step pins the exact package its tool came from: id, version and content digest.
      const browserPackage = catalog.packages.find((p) => p.folder === 'browser');
      const calls = (await first.ledger.steps(parked.runId)).filter((s) => s.kind === 'tool_call');
      expect(
        calls.map((c) => [c.toolName, c.kind === 'tool_call' ? c.package : undefined]),
      ).toEqual([
        [
          'browser_navigate',
          { id: 'mesh.browser', version: '1.0.0', digest: browserPackage?.digest },
        ],
        ['browser_read', { id: 'mesh.browser', version: '1.0.0', digest: browserPackage?.digest }],
        ['browser_act', { id: 'mesh.browser', version: '1.0.0', digest: browserPackage?.digest }],
        ['browser_handoff', expect.objectContaining({ version: '1.0.0' })],
        ['browser_read', { id: 'mesh.browser', version: '1.0.0', digest: browserPackage?.digest }],
      ]);
      expect(browserPackage?.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(stepJson(calls[0]!)['package']).toEqual(
        calls[0]?.kind === 'tool_call' && calls[0].package,
      );
    }, 90_000);
  },
);
