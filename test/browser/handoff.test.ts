import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentBudgetOperation } from '../../src/app/agents/budget-operation.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import type { Db } from '../../src/store/db.ts';
import { launchBrowser, screenshot, signedInOperator } from '../support/browser.ts';
import { freshPglite } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
  type FakeReply,
} from '../support/fake-chat-completions.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { startTestSite, type TestSite } from '../support/test-site.ts';
import { fakeModelAgent } from '../support/turn.ts';

const PASSWORD = 'correct horse';
const say = (content: string): FakeReply => ({ kind: 'completion', content });
const call = (id: string, name: string, args: object): FakeReply => ({
  kind: 'completion',
  content: null,
  toolCalls: [{ id, name, arguments: JSON.stringify(args) }],
});

/*
 * Issue 19's handoff, in real browsers: the agent's browser (a local Chromium) meets a login wall
 * and hands itself to its conversation. The run parks; Bob, a participant who is not the one who
 * asked, opens Mesh's own Live View, logs in by clicking and typing into the session's screen, and
 * hands it back. The run resumes in the same session (signed in) and answers. The password Bob
 * typed reached the site, and nothing of Mesh's: no step, message, artifact or other row, no log
 * line, no model request.
 */
describe('a browser handoff to a second participant through Live View', () => {
  let db: Db;
  let server: TestServer;
  let model: FakeChatCompletions;
  let site: TestSite;
  let browser: Browser;
  let grace: Page;
  let bob: Page;
  let mallory: Page;
  let bobActor: string;

  beforeAll(async () => {
    db = await freshPglite();
    server = await startTestServer(db);
    [model, site] = await Promise.all([startFakeChatCompletions(), startTestSite()]);
    await fakeModelAgent(server.mesh, model.baseUrl, 'surfer');
    const operator = { actor: 'operator:test' };
    await invokeOperation(
      server.mesh,
      agentBudgetOperation,
      { agent: 'surfer', rounds: 8 },
      operator,
    );
    browser = await launchBrowser();
    const signedIn = (label: string) =>
      signedInOperator(browser, db, server.url, label, {
        viewport: { width: 1500, height: 1100 },
        timeoutMs: 20_000,
      });
    grace = (await signedIn('grace')).page;
    const b = await signedIn('bob');
    bob = b.page;
    bobActor = b.actor;
    mallory = (await signedIn('mallory')).page;
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await model?.close();
    await site?.close();
    await db?.close();
  }, 60_000);

  async function send(page: Page, body: string): Promise<void> {
    await page.fill('form.send textarea[name=body]', body);
    await Promise.all([page.waitForURL(/conversation=/), page.click('form.send button')]);
  }

  it('registers a local browser backend and grants it on the browsers page', async () => {
    await grace.goto(`${server.url}browsers`);
    await grace.fill('form[action="/browsers/backends"] input[name=name]', 'chromium');
    await grace.selectOption('form[action="/browsers/backends"] select[name=kind]', 'local');
    await grace.check('form[action="/browsers/backends"] input[name=development]');
    await Promise.all([
      grace.waitForURL(/\/browsers$/),
      grace.click('form[action="/browsers/backends"] button'),
    ]);
    await expect(grace.locator('p.flash.ok').textContent()).resolves.toContain(
      'Added browser backend chromium',
    );
    await expect(grace.locator('tr[data-backend=chromium]').textContent()).resolves.toContain(
      'development only',
    );
    await grace.selectOption('form[action="/browsers/grants"] select[name=agent]', 'surfer');
    await grace.selectOption('form[action="/browsers/grants"] select[name=backend]', 'chromium');
    await grace.check('form[action="/browsers/grants"] input[name=allow_loopback]');
    await Promise.all([
      grace.waitForURL(/\/browsers$/),
      grace.click('form[action="/browsers/grants"] button'),
    ]);
    await expect(grace.locator('tr[data-grant=surfer]').textContent()).resolves.toContain(
      'allowed',
    );
    // A second backend of the same name is refused in the page's words, losing nothing.
    await grace.fill('form[action="/browsers/backends"] input[name=name]', 'chromium');
    await grace.check('form[action="/browsers/backends"] input[name=development]');
    await Promise.all([
      grace.waitForURL(/\/browsers$/),
      grace.click('form[action="/browsers/backends"] button'),
    ]);
    await expect(grace.locator('p.flash.error').textContent()).resolves.toContain('chromium');
    await expect(
      grace.locator('form[action="/browsers/backends"] input[name=name]').inputValue(),
    ).resolves.toBe('chromium');
    await screenshot(grace, 'browsers-page');
  }, 60_000);

  it('parks on the login wall, Bob logs in through Live View and hands back, and the run finishes', async () => {
    model.enqueue(say('Hello, Grace.'));
    await grace.goto(`${server.url}agents/surfer/chat`);
    await grace.selectOption('form.send select[name=audience]', 'shared');
    await send(grace, 'Hi.');
    await grace.locator('li.message.outbound', { hasText: 'Hello, Grace.' }).waitFor();
    const conversation = grace.url();
    model.enqueue(say('Hello, Bob.'));
    await bob.goto(conversation);
    await send(bob, 'I am here too.');
    await bob.locator('li.message.outbound', { hasText: 'Hello, Bob.' }).waitFor();

    // The agent opens the account page, meets the login wall, and hands its browser over.
    model.enqueue(
      call('n1', 'browser_navigate', { url: `${site.url}account` }),
      call('r1', 'browser_read', {}),
      call('h1', 'browser_handoff', { reason: 'log in to Acme (the account page needs it)' }),
    );
    await grace.goto(conversation);
    await send(grace, 'What is the balance on our Acme account?');
    const asked = grace.locator('li.message.outbound', {
      hasText: 'I need a person in the browser',
    });
    await asked.locator('form.question.open.handoff').waitFor();
    const runId = await asked.locator('form.question').getAttribute('data-question');
    const parked = await server.mesh.ledger.run(runId ?? '');
    expect(parked?.status).toBe('awaiting_input');
    const sessions = async () =>
      (
        await db.query<{ id: string; state: string; taken_over_by: string | null; holder: string }>(
          `select id, state, taken_over_by, holder from browser_sessions where run_id = $1`,
          [runId],
        )
      ).rows;
    expect((await sessions()).map((s) => s.state)).toEqual(['awaiting_human']);
    // The session said where to watch it when it started, before anyone was asked to take over.
    const started = grace.locator('li.message.outbound.progress', { hasText: 'watch it live' });
    await expect(started.locator('.body').textContent()).resolves.toBe(
      `My browser session has started; watch it live: /browser-sessions/${(await sessions())[0]?.id}/live`,
    );
    await screenshot(grace, 'handoff-asked');

    const link = await asked.locator('a.live-view-link').getAttribute('href');
    expect(link).toMatch(/^\/browser-sessions\/[0-9a-f-]{36}\/live$/);
    // The browsers page lists the session, handed over, with its Live View.
    await grace.goto(`${server.url}browsers`);
    const row = grace.locator(`tr[data-session="${(await sessions())[0]?.id}"]`);
    await expect(row.textContent()).resolves.toContain('awaiting human');
    await expect(row.locator('a', { hasText: 'Live View' }).getAttribute('href')).resolves.toMatch(
      /^\/browser-sessions\//,
    );

    // Mallory never spoke in the conversation: Live View is refused to her.
    const refused = await mallory.goto(`${server.url}${(link ?? '').slice(1)}`);
    expect(refused?.status()).toBe(403);

    // Bob opens Live View from the conversation and sees the session's screen.
    await bob.goto(conversation);
    await bob.locator('form.question.open.handoff a.live-view-link').click();
    await bob.waitForURL(/\/live$/);
    const screen = bob.locator('canvas[data-live-view]');
    await expect.poll(() => screen.getAttribute('data-state')).toBe('awaiting_human');
    await expect
      .poll(async () => Number(await screen.getAttribute('data-frames')))
      .toBeGreaterThan(0);

    // He clicks into the page, tabs to the user field, types the user, tabs to the password,
    // types it, and submits.
    await screen.click({ position: { x: 700, y: 500 } });
    await bob.keyboard.press('Tab');
    await bob.keyboard.type('grace');
    await bob.keyboard.press('Tab');
    await bob.keyboard.type(PASSWORD);
    await bob.keyboard.press('Enter');
    await expect
      .poll(() => site.posts.some((p) => p['user'] === 'grace' && p['password'] === PASSWORD), {
        timeout: 20_000,
      })
      .toBe(true);
    await expect.poll(() => site.paths.at(-1), { timeout: 20_000 }).toBe('/account');
    await screenshot(bob, 'handoff-live-view');

    // Bob hands back; the agent reads the page it was left on (in the same session) and answers.
    model.enqueue(call('r2', 'browser_read', { mode: 'text' }), say('The balance is 42 credits.'));
    await Promise.all([bob.waitForURL(/\/live$/), bob.click('form.handback button')]);
    await expect(bob.locator('p.flash.ok').textContent()).resolves.toContain('Handed back');
    await grace.goto(conversation);
    await grace
      .locator('li.message.outbound', { hasText: 'The balance is 42 credits.' })
      .waitFor({ timeout: 30_000 });
    const done = await server.mesh.ledger.run(runId ?? '');
    expect(done?.status).toBe('succeeded');

    // Attributed to Bob: the hand-back, the takeover, and the observation the model saw.
    await grace.reload();
    const settled = await grace
      .locator('li.message.outbound', { hasText: 'I need a person in the browser' })
      .locator('.question.answered')
      .textContent();
    expect((settled ?? '').replace(/\s+/g, ' ')).toContain(`Browser handed back by ${bobActor}`);
    // The session is released when the run's end is handled, just after its status is written.
    await expect
      .poll(async () => (await sessions())[0]?.state, { timeout: 20_000 })
      .toBe('released');
    const [session, ...others] = await sessions();
    expect(others).toEqual([]);
    expect(session?.taken_over_by).toBe(bobActor);
    const requests = model.requests.map(
      (r) => r.json as { messages: { role: string; content: string }[] },
    );
    const tools = (i: number) => requests[i]!.messages.filter((m) => m.role === 'tool');
    const after = tools(requests.length - 1);
    expect(after.at(-2)?.content).toContain(`${bobActor} took the browser over and handed it back`);
    // The same session, signed in: the account page, not the login wall.
    expect(after.at(-1)?.content).toContain('Balance: 42 credits');

    // The password reached the site and nothing of Mesh's.
    for (const r of model.requests) expect(JSON.stringify(r.json)).not.toContain(PASSWORD);
    for (const line of server.logs) expect(line).not.toContain(PASSWORD);
    const { rows: tables } = await db.query<{ name: string }>(
      `select table_name as name from information_schema.tables where table_schema = 'public'`,
    );
    for (const { name } of tables) {
      const { rows } = await db.query<{ row: string }>(`select t::text as row from "${name}" t`);
      for (const { row } of rows) expect(row, name).not.toContain(PASSWORD);
    }
    const { rows: artifacts } = await db.query<{ content: Buffer }>(
      `select a.content from artifacts a where a.run_id = $1`,
      [runId],
    );
    expect(artifacts.length).toBeGreaterThan(0);
    for (const a of artifacts)
      expect(Buffer.from(a.content).toString('utf8')).not.toContain(PASSWORD);

    // Once handed back, the session is the agent's: a person's input is refused.
    const input = async (form: Record<string, string>) =>
      bob.request.post(`${server.url}${(link ?? '').slice(1).replace(/live$/, 'input')}`, {
        form: { csrf: (await screen.getAttribute('data-csrf')) ?? '', ...form },
      });
    const late = await input({ type: 'text', text: 'x' });
    expect(late.status()).toBe(409);
    expect(await late.text()).toContain('not handed over');
    // Input that is not one of the page's kinds is refused naming the field, not its value.
    const bad = await input({ type: 'key', key: 'F13-secret' });
    expect(bad.status()).toBe(400);
    expect(await bad.text()).toContain('`form.key` must be one of');
    expect(await bad.text()).not.toContain('F13-secret');
  }, 150_000);
});
