import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../../src/store/db.ts';
import { launchBrowser, login, screenshot } from '../support/browser.ts';
import { freshPglite } from '../support/db.ts';
import {
  startFakeChatCompletions,
  type FakeChatCompletions,
} from '../support/fake-chat-completions.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { fakeModelAgent } from '../support/turn.ts';

/*
 * Issue 36, the operator console, in a real browser: a run page as a timeline (each step's
 * duration on a waterfall, each budget meter against its limit, withheld tools grouped and
 * folded), a failed turn shown as an error, and the chat and run pages usable at 390 px.
 */
describe('the operator console in a browser', () => {
  let db: Db;
  let server: TestServer;
  let model: FakeChatCompletions;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    db = await freshPglite();
    server = await startTestServer(db);
    model = await startFakeChatCompletions();
    await fakeModelAgent(server.mesh, model.baseUrl, 'ops');
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    await login(page, server.url, server.token);
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
    await model?.close();
    await db?.close();
  }, 60_000);

  /** Sends `body` in a new conversation and waits for the page the post lands on. */
  async function send(body: string): Promise<void> {
    await page.goto(`${server.url}agents/ops/chat`);
    await page.fill('form.send textarea[name=body]', body);
    await Promise.all([page.waitForURL(/conversation=/), page.click('form.send button')]);
  }

  /** Whether the page scrolls sideways (wider than its viewport). */
  const overflows = (p: Page) =>
    p.evaluate<boolean>(
      'document.documentElement.scrollWidth > document.documentElement.clientWidth',
    );

  it('shows a sent message working, then its steps as they happen, then the reply, with no reload', async () => {
    let first!: () => void;
    let second!: () => void;
    model.enqueue(
      {
        kind: 'after',
        gate: new Promise<void>((resolve) => (first = resolve)),
        reply: {
          kind: 'completion',
          content: null,
          toolCalls: [{ id: 'w1', name: 'remember', arguments: '{"content":"standup is at 9"}' }],
        },
      },
      {
        kind: 'after',
        gate: new Promise<void>((resolve) => (second = resolve)),
        reply: {
          kind: 'completion',
          content: 'Noted: standup is at 9.',
          usage: { promptTokens: 900, completionTokens: 12, totalTokens: 912 },
        },
      },
    );
    await send('remember that standup is at 9');
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    // Working: the message is there, Send waits, and the model is being asked.
    const sent = page.locator('li.message.inbound', { hasText: 'standup is at 9' });
    await expect(page.locator('form.send button').isDisabled()).resolves.toBe(true);
    await page.locator('[data-busy-note]').waitFor();
    await sent.locator('ol.activity li', { hasText: 'Asking the model (round 1)' }).waitFor();
    await screenshot(page, 'console-chat-working');
    first();
    await sent.locator('ol.activity li', { hasText: 'Calling remember' }).waitFor();
    await sent.locator('ol.activity li', { hasText: 'remember: done' }).waitFor();
    await sent.locator('ol.activity li', { hasText: 'Asking the model (round 2)' }).waitFor();
    await expect(
      page.locator('li.message.outbound', { hasText: 'standup is at 9' }).count(),
    ).resolves.toBe(0);
    second();
    await page.locator('li.message.outbound', { hasText: 'Noted: standup is at 9.' }).waitFor();
    await expect.poll(() => page.locator('form.send button').isDisabled()).toBe(false);
    await expect(page.locator('[data-busy-note]').count()).resolves.toBe(0);
    expect(navigations).toBe(0);
    await screenshot(page, 'doc-chat');
  }, 60_000);

  it('shows a run as a timeline: durations, budget meters, withheld tools grouped and folded', async () => {
    model.enqueue(
      {
        kind: 'completion',
        content: null,
        toolCalls: [
          { id: 'r1', name: 'remember', arguments: '{"content":"the freeze is Monday"}' },
        ],
      },
      { kind: 'completion', content: 'Noted: the freeze is Monday.' },
    );
    await send('remember that the freeze is Monday');
    await page.locator('li.message.outbound', { hasText: 'Noted: the freeze' }).waitFor();
    await Promise.all([page.waitForURL(/\/runs\//), page.locator('a.run-link').last().click()]);

    // Each step has a duration and a bar on the waterfall.
    const steps = page.locator('li.step');
    const count = await steps.count();
    expect(count).toBeGreaterThanOrEqual(6);
    await expect(page.locator('li.step .duration').count()).resolves.toBe(count);
    await expect(page.locator('li.step svg.waterfall').count()).resolves.toBe(count);
    const waited = await page
      .locator('li.step[data-kind=model_request] .duration')
      .first()
      .textContent();
    expect(waited).toMatch(/^\d+(\.\d)? (ms|s)$/);

    // The budget as meters against their limits, not raw JSON.
    const meters = page.locator('ul.meters li.meter-row');
    await expect(meters.locator('meter').count()).resolves.toBeGreaterThanOrEqual(6);
    await expect(
      page.locator('li.meter-row[data-meter=rounds] .meter-text').textContent(),
    ).resolves.toBe('2 of 3');
    await expect(
      page.locator('li.meter-row[data-meter="tool calls"] .meter-text').textContent(),
    ).resolves.toBe('1 of 16');
    await expect(page.locator('.summary').textContent()).resolves.not.toContain('"maxRounds"');

    // Withheld tools: grouped by reason with counts, folded; at most 5 lines show unfolded.
    const withheld = page.locator('li.step[data-kind=model_request]').first().locator('.withheld');
    const summary = withheld.locator('summary');
    await expect(summary.textContent()).resolves.toMatch(/Withheld\s+\d+\s+tools:\s+\d+ needs/);
    await expect(withheld.locator('li').first().isVisible()).resolves.toBe(false);
    const box = await summary.boundingBox();
    const lineHeight = await summary.evaluate((el) =>
      parseFloat(
        (
          globalThis as unknown as {
            getComputedStyle(e: unknown): { lineHeight: string };
          }
        ).getComputedStyle(el).lineHeight,
      ),
    );
    expect((box?.height ?? 0) / lineHeight).toBeLessThanOrEqual(5);
    await summary.click();
    await expect(withheld.locator('li').first().isVisible()).resolves.toBe(true);
    await screenshot(page, 'doc-run');

    // At 390 px the run page does not scroll sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    expect(await overflows(page)).toBe(false);
    await screenshot(page, 'console-run-390');
    await page.setViewportSize({ width: 1280, height: 900 });
  }, 60_000);

  it('shows a failed turn as an error, live and after a reload, and fits the chat at 390 px', async () => {
    // Every attempt of the call (four, the default policy) fails: the turn ends failed.
    for (let i = 0; i < 4; i++)
      model.enqueue({ kind: 'error', status: 500, message: 'the model is down' });
    await send('hello?');
    const error = page.locator('li.message.inbound .run-error');
    await error.waitFor();
    expect(model.pending).toBe(0);
    await expect(error.textContent()).resolves.toContain('The turn failed: model call failed');
    await expect(page.locator('p.flash.ok', { hasText: 'failed' }).count()).resolves.toBe(0);
    await page.reload();
    await expect(page.locator('li.message.inbound .run-error').count()).resolves.toBe(1);

    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    expect(await overflows(page)).toBe(false);
    await screenshot(page, 'console-chat-390');
  }, 60_000);

  it('charts usage from the real runs: runs, tokens and tool calls per day, failures, slowest tools', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${server.url}usage`);
    const today = new Date().toISOString().slice(0, 10);
    const runs = page.locator('figure.chart[data-metric=runs]');
    // The runs above: three turns and one failure, all today, all of the agent `ops`.
    await expect(runs.locator('rect.series-0 title').allTextContents()).resolves.toEqual([
      `${today} · ops: 3 runs`,
    ]);
    const tokens = await page
      .locator('figure.chart[data-metric=tokens] rect.series-0 title')
      .textContent();
    expect(tokens).toBe(`${today} · ops: 912 tokens`);
    await expect(
      page.locator('figure.chart[data-metric=tool_calls] rect.series-0 title').textContent(),
    ).resolves.toBe(`${today} · ops: 2 tool calls`);
    await expect(page.locator('ul.legend li').allTextContents()).resolves.toEqual([
      expect.stringContaining('ops'),
    ]);
    const failure = page.locator('tr', { hasText: 'model call failed' });
    await expect(failure.locator('td').first().textContent()).resolves.toBe('1');
    await expect(page.locator('td.latency').count()).resolves.toBe(1);
    await expect(
      page.locator('tr', { hasText: 'remember' }).locator('td').nth(1).textContent(),
    ).resolves.toBe('2');
    await screenshot(page, 'doc-usage');

    // The API answers the numbers the chart was drawn from.
    const api = await server.api('GET', '/api/usage?days=7');
    expect(api.status).toBe(200);
    expect(api.json).toMatchObject({
      days: 7,
      by_day: [{ day: today, agent: 'ops', runs: 3, tool_calls: 2 }],
      slowest_tools: [{ tool: 'remember', calls: 2 }],
    });
  }, 60_000);

  it('keeps what was typed in a refused form, names the field in the form’s words, shows it as an error', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${server.url}agents/ops/settings`);
    const form = page.locator('form[action="/agents/ops/budget"]');
    await form.locator('input[name=tool_calls]').fill('40');
    await form.locator('input[name=rounds]').fill('500');
    await Promise.all([page.waitForURL(/\/agents\/ops\/settings/), form.locator('button').click()]);
    await expect(page.locator('p.flash.error').count()).resolves.toBe(1);
    await expect(page.locator('p.flash.ok').count()).resolves.toBe(0);
    const again = page.locator('form[action="/agents/ops/budget"]');
    await expect(again.locator('input[name=rounds]').inputValue()).resolves.toBe('500');
    await expect(again.locator('input[name=tool_calls]').inputValue()).resolves.toBe('40');
    await expect(again.locator('.field-error').textContent()).resolves.toBe(
      'Rounds (model requests): must be <= 200',
    );
    await screenshot(page, 'console-refused-form');
    // Nothing was saved: the profile is still the default.
    const shown = await server.api('GET', '/api/agents/ops');
    expect((shown.json as { budget: { rounds: number; tool_calls: number } }).budget).toMatchObject(
      {
        rounds: 3,
        tool_calls: 16,
      },
    );
  }, 60_000);

  it("lists an agent's memories on its Memories tab, each with the run that wrote it", async () => {
    await page.goto(`${server.url}agents/ops/memories`);
    const rows = page.locator('tr[data-memory]');
    await expect(rows.count()).resolves.toBe(2);
    await expect(rows.first().textContent()).resolves.toContain('the freeze is Monday');
    await expect(rows.nth(1).textContent()).resolves.toContain('standup is at 9');
    await expect(rows.first().locator('a[href^="/runs/"]').count()).resolves.toBe(1);
    const api = await server.api('GET', '/api/agents/ops/memories?status=active');
    expect((api.json as { memories: { content: string; run_id: string }[] }).memories).toEqual([
      expect.objectContaining({
        content: 'the freeze is Monday',
        run_id: expect.any(String) as string,
      }),
      expect.objectContaining({ content: 'standup is at 9' }),
    ]);
  }, 60_000);

  it('lists outbound events across agents and runs by time, each filterable', async () => {
    await page.goto(`${server.url}outbound`);
    const events = page.locator('tr.effect');
    // Each reply the turns above delivered (the failed turn sent none).
    await expect(events.count()).resolves.toBe(2);
    await expect(events.first().locator('code').textContent()).resolves.toBe('reply');
    await expect(events.first().getAttribute('data-state')).resolves.toBe('delivered');
    await page.selectOption('select[name=state]', 'failed');
    await Promise.all([page.waitForURL(/state=failed/), page.click('main form.inline button')]);
    await expect(page.locator('tr.effect').count()).resolves.toBe(0);
    const api = await server.api('GET', '/api/outbound?agent=ops');
    expect((api.json as { events: { agent: string; kind: string }[] }).events).toEqual([
      expect.objectContaining({ agent: 'ops', kind: 'reply' }),
      expect.objectContaining({ agent: 'ops', kind: 'reply' }),
    ]);

    await page.goto(`${server.url}runs?hours=1`);
    await expect(page.locator('select[name=hours]').inputValue()).resolves.toBe('1');
    await expect(page.locator('main tbody tr').count()).resolves.toBe(3);
  }, 60_000);

  it('serves the API reference from its own OpenAPI document, linked from every page', async () => {
    await page.goto(`${server.url}agents`);
    await Promise.all([page.waitForURL(/\/reference$/), page.click('header a[href="/reference"]')]);
    const doc = (await (await page.request.get(`${server.url}reference/openapi.json`)).json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.openapi).toBe('3.1.0');
    const operations = Object.values(doc.paths).reduce((n, m) => n + Object.keys(m).length, 0);
    await expect(page.locator('section.endpoint').count()).resolves.toBe(operations);
    const answer = page.locator('section.endpoint', {
      has: page.locator('h3 code', { hasText: /^\/api\/runs\/\{run\}\/answer$/ }),
    });
    await expect(answer.locator('.method').textContent()).resolves.toBe('POST');
    const field = answer.locator('tbody tr', {
      has: page.locator('td code', { hasText: /^body$/ }),
    });
    await expect(field.textContent()).resolves.toContain('required');
  }, 60_000);

  it('offers pick lists where a name must exist, so a typo cannot lose a grant form', async () => {
    await page.goto(`${server.url}web`);
    const options = async (selector: string) =>
      (await page.locator(selector).allTextContents()).map((t) => t.trim());
    await expect(options('form[action="/web/grants"] select[name=agent] option')).resolves.toEqual([
      'choose…',
      'ops',
    ]);
    await expect(
      options('form[action="/web/grants"] select[name=provider] option'),
    ).resolves.toEqual(['no provider yet']);
    await page.goto(`${server.url}workspaces`);
    await expect(
      options('form[action="/workspaces/grants"] select[name=agent] option'),
    ).resolves.toEqual(['choose…', 'ops']);
  }, 60_000);

  it('folds each package on the Packages page, so the page is a list until one is opened', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${server.url}packages`);
    const packages = page.locator('details.package');
    expect(await packages.count()).toBeGreaterThanOrEqual(5);
    await expect(page.locator('details.package[open]').count()).resolves.toBe(0);
    const height = await page.evaluate<number>('document.documentElement.scrollHeight');
    expect(height).toBeLessThan(2_000);
    await packages.first().locator('summary').click();
    await expect(packages.first().locator('table').isVisible()).resolves.toBe(true);

    // An agent's Tools tab folds each package none of whose tools is offered.
    await page.goto(`${server.url}agents/ops/tools`);
    const folded = page.locator('details.package-body:not([open])');
    expect(await folded.count()).toBeGreaterThanOrEqual(5);
    await expect(
      page
        .locator('section.package[data-package="mesh.memory"] details.package-body')
        .getAttribute('open'),
    ).resolves.toBe('');
    const tools = await page.evaluate<number>('document.documentElement.scrollHeight');
    console.log(`Tools tab: ${tools} px`);
    // Two packages open (memory and the agent's own verbs), the other ten folded.
    expect(tools).toBeLessThan(4_500);
  }, 60_000);

  it('moves a live run page’s budget meters as the run spends, without a reload', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    let first!: () => void;
    let second!: () => void;
    model.enqueue(
      {
        kind: 'after',
        gate: new Promise<void>((resolve) => (first = resolve)),
        reply: {
          kind: 'completion',
          content: null,
          toolCalls: [
            { id: 'm1', name: 'remember', arguments: '{"content":"the retro is Friday"}' },
          ],
        },
      },
      {
        kind: 'after',
        gate: new Promise<void>((resolve) => (second = resolve)),
        reply: { kind: 'completion', content: 'Noted: the retro is Friday.' },
      },
    );
    await send('remember that the retro is Friday');
    const href = await page.locator('a.run-link').last().getAttribute('href');
    await page.goto(`${server.url}${(href ?? '').slice(1)}`);
    const text = (meter: string) =>
      page.locator(`li.meter-row[data-meter="${meter}"] .meter-text`).textContent();
    await expect(text('tool calls')).resolves.toBe('0 of 16');
    let navigations = 0;
    page.on('framenavigated', (frame) => {
      if (frame === page.mainFrame()) navigations++;
    });
    first();
    await expect.poll(() => text('tool calls'), { timeout: 10_000 }).toBe('1 of 16');
    await expect.poll(() => text('rounds'), { timeout: 10_000 }).toBe('1 of 3');
    // The outbound events table is there while the run is live, empty until it has one.
    await expect(page.locator('[data-effects] tr.effect').count()).resolves.toBe(0);
    second();
    await expect.poll(() => text('rounds'), { timeout: 10_000 }).toBe('2 of 3');
    // The reply, delivered to the conversation, is the run's outbound event: its row arrives live.
    const row = page.locator('[data-effects] tr.effect[data-state="delivered"]');
    await row.waitFor({ timeout: 10_000 });
    await expect(row.locator('td').nth(1).textContent()).resolves.toBe('reply');
    // All of it live, in the page as it was loaded.
    expect(navigations).toBe(0);
  }, 60_000);

  it('streams the reply as the model writes it, on the chat and run pages, then shows the recorded reply', async () => {
    await page.setViewportSize({ width: 1280, height: 900 });
    let release!: () => void;
    model.enqueue({
      kind: 'completion',
      content: 'Deploys are frozen until Monday.',
      pieces: ['Deploys ', 'are ', 'frozen ', 'until ', 'Monday.'],
      holdBeforeLast: new Promise<void>((resolve) => (release = resolve)),
    });
    await send('are deploys frozen?');
    // The text so far, before the response is recorded: a draft, not yet a message of the run.
    const draft = page.locator('li.message.draft .body');
    await expect
      .poll(() => draft.textContent(), { timeout: 10_000 })
      .toBe('Deploys are frozen until ');
    await expect(
      page.locator('li.message.outbound[data-message]', { hasText: 'Deploys' }).count(),
    ).resolves.toBe(0);
    await expect(page.locator('form.send button').isDisabled()).resolves.toBe(true);
    // The run page shows the same text under its steps.
    const href = await page.locator('a.run-link').last().getAttribute('href');
    const runPage = await context.newPage();
    await runPage.goto(`${server.url}${(href ?? '').slice(1)}`);
    await expect
      .poll(() => runPage.locator('.draft-reply .body').textContent(), { timeout: 10_000 })
      .toBe('Deploys are frozen until ');
    release();
    // The recorded reply takes the draft's place; nothing of the draft is left.
    await page
      .locator('li.message.outbound[data-message]', { hasText: 'Deploys are frozen until Monday.' })
      .waitFor();
    await expect.poll(() => page.locator('li.draft').count()).toBe(0);
    await expect.poll(() => page.locator('form.send button').isDisabled()).toBe(false);
    await runPage
      .locator('li.step', { hasText: 'Deploys are frozen until Monday.' })
      .first()
      .waitFor();
    await expect.poll(() => runPage.locator('.draft-reply').count()).toBe(0);
    await runPage.close();
    // The request asked for a stream; the recorded reply is the whole text.
    const last = model.requests.at(-1)?.json as Record<string, unknown>;
    expect(last).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    await page.reload();
    await expect(
      page.locator('li.message.outbound', { hasText: 'Deploys are frozen until Monday.' }).count(),
    ).resolves.toBe(1);
  }, 60_000);

  it('shows a progress note in the chat as the run posts it, before the reply, and after a reload', async () => {
    let release!: () => void;
    model.enqueue(
      {
        kind: 'completion',
        content: null,
        toolCalls: [
          {
            id: 'p1',
            name: 'progress',
            arguments: '{"text":"Read the three reports; comparing them now"}',
          },
        ],
      },
      {
        kind: 'after',
        gate: new Promise<void>((resolve) => (release = resolve)),
        reply: { kind: 'completion', content: 'The Q3 report is the outlier.' },
      },
    );
    await send('which report is off?');
    // Posted while the run goes on: the model has not answered yet.
    const note = page.locator('li.message.outbound.progress', {
      hasText: 'Read the three reports; comparing them now',
    });
    await note.waitFor();
    await expect(
      page.locator('li.message.outbound', { hasText: 'The Q3 report is the outlier.' }).count(),
    ).resolves.toBe(0);
    release();
    await page
      .locator('li.message.outbound', { hasText: 'The Q3 report is the outlier.' })
      .waitFor();
    await page.reload();
    await expect(note.locator('.meta').textContent()).resolves.toContain('progress');
  }, 60_000);
});
