import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callToolAsOperator } from '../../src/app/runs/operator-call.ts';
import { findAgent } from '../../src/app/agents/reads.ts';
import type { Lease } from '../../src/run/records.ts';
import { parseScript } from '../../src/providers/scripted.ts';
import type { Db } from '../../src/store/db.ts';
import { launchBrowser, login, screenshot } from '../support/browser.ts';
import { freshPglite } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { heldRun as heldRunOf } from '../support/held-run.ts';
import { fakeModelAgent, scriptedAgent, seedMemory } from '../support/turn.ts';
import { startFakeMcpServer, textTool } from '../support/mcp-server.ts';
import { startFakeChatCompletions } from '../support/fake-chat-completions.ts';

const DEMO_SCRIPT = new URL('../../examples/demo-script.json', import.meta.url);
/** A 1×1 PNG. */
const PNG_1X1 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/**
 * Clicks a form's submit button, checks the status the post was answered with (a 303 back to a
 * page, unless told otherwise) and waits for the page the browser lands on.
 */
async function submit(page: Page, button: Locator, status = 303): Promise<void> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().method() === 'POST' && r.frame() === page.mainFrame()),
    page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame() }),
    button.click(),
  ]);
  await page.waitForLoadState('domcontentloaded');
  const said = response.status() === 303 ? '' : (await text(page.locator('main'))).slice(0, 300);
  expect(response.status(), `POST ${response.url()} answered: ${said}`).toBe(status);
}

/** The trimmed, whitespace-collapsed text of an element. */
async function text(locator: Locator): Promise<string> {
  return ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

/** One attribute of every element a locator matches, in document order. */
async function attributes(locator: Locator, name: string): Promise<(string | null)[]> {
  return Promise.all((await locator.all()).map((element) => element.getAttribute(name)));
}

/** The Direct or Shared offer cell of a tool row on the Tools tab. */
function offerCell(page: Page, tool: string, audience: 'direct' | 'shared'): Locator {
  return page.locator(`tr[data-tool="${tool}"] > td[data-audience="${audience}"]`);
}

describe('web UI in a browser (pglite)', () => {
  let db: Db;
  let server: TestServer;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  /** Every response body the browser received (redirects have none). */
  const received: Promise<string>[] = [];

  beforeAll(async () => {
    db = await freshPglite();
    server = await startTestServer(db);
    const script = parseScript(JSON.parse(readFileSync(DEMO_SCRIPT, 'utf8')));
    const demo = await scriptedAgent(server.mesh, script, 'demo');
    // With a memory, the demo's turns are offered every memory verb (recall, amend and forget
    // wait for one), so the pages below show the whole package.
    await seedMemory(db, demo, 'the demo agent keeps notes');
    browser = await launchBrowser();
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.setDefaultTimeout(10_000);
    page.on('response', (response) => {
      received.push(response.text().catch(() => ''));
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await browser?.close();
    await server?.close();
    await db?.close();
  }, 60_000);

  /** Opens a signed-in page, failing at once (not on a later selector) if it bounced to /login. */
  async function open(path: string): Promise<void> {
    const response = await page.goto(`${server.url}${path}`);
    expect(new URL(page.url()).pathname, 'the page did not stay signed in').toBe(`/${path}`);
    expect(response?.status()).toBe(200);
  }

  /** Sends a chat message in a new conversation on the agent's Chat tab. */
  async function sendChat(body: string): Promise<void> {
    await open('agents/demo/chat');
    await page.fill('form.send textarea[name=body]', body);
    await submit(page, page.locator('form.send button'));
    expect(new URL(page.url()).pathname).toBe('/agents/demo/chat');
    expect(new URL(page.url()).searchParams.get('conversation')).toMatch(/^[0-9a-f-]{36}$/);
  }

  /** Follows the conversation's (last) run link to the run page, once its run has succeeded. */
  async function openRun(): Promise<void> {
    const link = page.locator('a.run-link').last();
    await page.locator('a.run-link', { hasText: 'run succeeded' }).last().waitFor();
    await expect(text(link)).resolves.toBe('run succeeded');
    await Promise.all([page.waitForURL(/\/runs\/[0-9a-f-]{36}$/), link.click()]);
  }

  it('logs in: a wrong token is refused on /login, the real one lands on /agents', async () => {
    await page.goto(`${server.url}login`);
    await page.fill('input[name=token]', 'mesh_not-a-real-token');
    await submit(page, page.locator('form[action="/login"] button'), 401);
    expect(new URL(page.url()).pathname).toBe('/login');
    await expect(text(page.locator('p.flash.error[role=alert]'))).resolves.toBe(
      'That is not a valid operator token.',
    );
    await expect(page.context().cookies()).resolves.toEqual([]);
    await screenshot(page, 'login');

    await login(page, server.url, server.token);
    expect(new URL(page.url()).pathname).toBe('/agents');
    const names = await page.locator('table.list tbody td:first-child a').allTextContents();
    expect(names.map((n) => n.trim())).toEqual(['demo']);
    await expect(
      page.locator('table.list a', { hasText: 'demo' }).getAttribute('href'),
    ).resolves.toBe('/agents/demo/tools');
    await screenshot(page, 'agents');
  });

  it('renders both packages on the Tools tab from their manifests', async () => {
    await open('agents/demo/tools');
    const memory = page.locator('section.package[data-package="mesh.memory"]');
    const tracker = page.locator('section.package[data-package="example.tracker"]');
    await expect(text(memory.locator('h2'))).resolves.toBe('mesh.memory 1.0.0');
    await expect(text(tracker.locator('h2'))).resolves.toBe('example.tracker 1.2.0');
    await expect(attributes(memory.locator('tr[data-tool]'), 'data-tool')).resolves.toEqual([
      'remember',
      'recall',
      'amend',
      'forget',
    ]);
    await expect(attributes(tracker.locator('tr[data-tool]'), 'data-tool')).resolves.toEqual([
      'tracker_search_issues',
      'tracker_get_issue',
      'tracker_create_issue',
    ]);

    // Class, replay and needs, as the manifests declare them.
    const cells = async (tool: string) =>
      (await page.locator(`tr[data-tool="${tool}"] > td`).allTextContents())
        .slice(1, 4)
        .map((c) => c.replace(/\s+/g, ' ').trim());
    await expect(cells('remember')).resolves.toEqual([
      'query',
      'internal',
      'service:mesh.memory.store',
    ]);
    await expect(cells('recall')).resolves.toEqual([
      'query',
      'replayable',
      'service:mesh.memory.store',
    ]);
    await expect(cells('tracker_search_issues')).resolves.toEqual([
      'query',
      'replayable',
      'secret:tracker_api_token',
    ]);
    await expect(cells('tracker_create_issue')).resolves.toEqual([
      'effect',
      'effectful',
      'secret:tracker_api_token',
    ]);

    // Built-in tools are on and offered. The tracker has an on_enable hook: its install starts
    // disabled, and its tools wait for an operator to enable it.
    for (const tool of ['remember', 'recall', 'amend', 'forget']) {
      await expect(text(offerCell(page, tool, 'direct'))).resolves.toBe('offered');
      await expect(text(offerCell(page, tool, 'shared'))).resolves.toBe('offered');
    }
    await expect(memory.locator('.install').getAttribute('data-install-state')).resolves.toBe(
      'enabled',
    );
    await expect(text(offerCell(page, 'tracker_search_issues', 'direct'))).resolves.toBe(
      'withheld package example.tracker is not enabled for this agent',
    );
    await submit(page, tracker.locator('.install').getByRole('button', { name: 'Enable' }));
    await expect(text(page.locator('p.flash.ok'))).resolves.toBe('example.tracker is enabled.');
    await expect(tracker.locator('.install').getAttribute('data-install-state')).resolves.toBe(
      'enabled',
    );
    await expect(text(tracker.locator('.install .history li[data-seq="1"]'))).resolves.toMatch(
      / enable disabled → enabled succeeded after 1 attempt\(s\) by /,
    );
    // Enabled, but still withheld: no token yet.
    for (const tool of ['tracker_search_issues', 'tracker_get_issue', 'tracker_create_issue']) {
      for (const audience of ['direct', 'shared'] as const) {
        await expect(text(offerCell(page, tool, audience))).resolves.toBe(
          'withheld needs secret tracker_api_token, not captured for this agent',
        );
      }
      await expect(
        page.locator(`tr[data-tool="${tool}"] button.toggle`).getAttribute('aria-label'),
      ).resolves.toBe(`Disable ${tool}`);
    }

    // The tracker's fields: a write-only secret slot, a public value and a config value.
    const secret = tracker.locator('.field.secret[data-key="api_token"]');
    await expect(text(secret.locator('.status'))).resolves.toBe('not captured');
    await expect(secret.locator('input[type=password][name=value]').count()).resolves.toBe(1);
    await expect(
      tracker.locator('.field[data-key="default_project"] input[name=value]').inputValue(),
    ).resolves.toBe('MESH');
    await expect(
      tracker.locator('.field[data-key="page_size"] input[name=value]').inputValue(),
    ).resolves.toBe('20');
    await expect(memory.locator('.field').count()).resolves.toBe(0);
    await screenshot(page, 'tools');
  });

  it('disabling a tool withholds it from the next model request, with the reason', async () => {
    await open('agents/demo/tools');
    await submit(page, page.getByRole('button', { name: 'Disable recall', exact: true }));
    expect(new URL(page.url()).pathname).toBe('/agents/demo/tools');
    await expect(text(page.locator('p.flash.ok'))).resolves.toBe('recall is disabled for demo.');
    const toggle = page.locator('tr[data-tool="recall"] button.toggle');
    await expect(text(toggle)).resolves.toBe('Disabled');
    await expect(toggle.getAttribute('aria-label')).resolves.toBe('Enable recall');
    await expect(text(offerCell(page, 'recall', 'direct'))).resolves.toBe(
      'withheld disabled for this agent',
    );
    // The notice is one-shot.
    await page.reload();
    await expect(page.locator('p.flash').count()).resolves.toBe(0);

    await sendChat('remember that the staging freeze is Monday');
    await openRun();
    const request = page.locator('li.step[data-kind=model_request]').first();
    const offered = await request.locator('.offered code.tool').allTextContents();
    expect(offered).toEqual([
      'request_input',
      'progress',
      'commit',
      'conversation_search',
      'remember',
      'amend',
      'forget',
    ]);
    // Withheld tools come grouped by reason, with counts, folded under one line.
    const withheld = (await request.locator('.withheld li').allTextContents()).map((w) =>
      w.replace(/\s+/g, ' ').trim(),
    );
    expect(withheld).toContain('1 disabled for this agent: recall');
    expect(withheld).toContain(
      '3 needs secret tracker_api_token, not captured for this agent: tracker_search_issues tracker_get_issue tracker_create_issue',
    );
    await expect(request.locator('.withheld li').first().isVisible()).resolves.toBe(false);
    await expect(text(request.locator('.withheld summary'))).resolves.toMatch(
      /^Withheld \d+ tools: /,
    );
    await screenshot(page, 'run-disabled');

    // Back on, so the later tests see the default.
    await open('agents/demo/tools');
    await submit(page, page.getByRole('button', { name: 'Enable recall', exact: true }));
    await expect(text(page.locator('p.flash.ok'))).resolves.toBe('recall is enabled for demo.');
    await expect(text(page.locator('tr[data-tool="recall"] button.toggle'))).resolves.toBe(
      'Enabled',
    );
  });

  it("sets the agent's budget per run on its Settings tab, as the API shows it", async () => {
    await open('agents/demo/settings');
    const form = page.locator('form[action="/agents/demo/budget"]');
    await expect(form.locator('input[name=rounds]').inputValue()).resolves.toBe('3');
    await form.locator('input[name=rounds]').fill('7');
    await submit(page, form.getByRole('button', { name: 'Save budget' }));
    expect(new URL(page.url()).pathname).toBe('/agents/demo/settings');
    await expect(text(page.locator('p.flash.ok'))).resolves.toBe(
      "Saved demo's budget: 7 rounds per run.",
    );
    await expect(form.locator('input[name=rounds]').inputValue()).resolves.toBe('7');
    const agent = await server.api('GET', '/api/agents/demo');
    expect((agent.json as { budget: { rounds: number } }).budget.rounds).toBe(7);
    // Back to the default three rounds, so the chats below are what they were.
    await server.api('PUT', '/api/agents/demo/budget', { reset: true });
  });

  it('captures a secret write-only: presence and version show, the value never does', async () => {
    const canary = `canary-ui-${randomBytes(8).toString('hex')}`;
    await open('agents/demo/tools');
    // None of the tracker's tools is offered yet (no token), so its package is folded: open it.
    const tracker = page.locator('section.package[data-package="example.tracker"]');
    await expect(tracker.locator('details.package-body').getAttribute('open')).resolves.toBeNull();
    await expect(text(tracker.locator('details.package-body > summary'))).resolves.toBe(
      '3 tools: 0 offered, 3 withheld · settings and credentials',
    );
    await tracker.locator('details.package-body > summary').click();
    const slot = tracker.locator('.field.secret[data-key="api_token"]');
    await slot.locator('input[type=password][name=value]').fill(canary);
    await submit(page, slot.getByRole('button', { name: 'Capture', exact: true }));

    expect(new URL(page.url()).pathname).toBe('/agents/demo/tools');
    await expect(text(page.locator('p.flash.ok'))).resolves.toBe('Captured api_token (version 1).');
    const status = await text(slot.locator('.status'));
    expect(status).toMatch(/^present version 1, captured \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    await expect(slot.locator('input[type=password]').inputValue()).resolves.toBe('');
    await expect(text(slot.getByRole('button', { name: 'Replace', exact: true }))).resolves.toBe(
      'Replace',
    );
    await expect(slot.getByRole('button', { name: 'Revoke', exact: true }).count()).resolves.toBe(
      1,
    );
    for (const tool of ['tracker_search_issues', 'tracker_get_issue', 'tracker_create_issue']) {
      await expect(text(offerCell(page, tool, 'direct'))).resolves.toBe('offered');
      await expect(text(offerCell(page, tool, 'shared'))).resolves.toBe('offered');
    }
    expect(await page.content()).not.toContain(canary);
    await screenshot(page, 'secret');

    // Nor does the API's view of the agent's packages carry it.
    const packages = await server.api('GET', '/api/agents/demo/packages');
    expect(packages.status).toBe(200);
    expect(packages.text).toContain('api_token');

    const browserBodies = await Promise.all(received);
    expect(browserBodies.length).toBeGreaterThan(0);
    expect([...browserBodies, ...server.bodies, ...server.logs].join('\n')).not.toContain(canary);
  });

  it('chats: the reply and a run link show, and the run page shows every step', async () => {
    await sendChat('remember that the deploy window is Friday');
    await expect(text(page.locator('p.flash.ok'))).resolves.toBe('Sent.');
    // The turn runs on the server's worker: the page shows the reply when it lands.
    await page.locator('li.message.outbound').waitFor();
    await expect(page.locator('li.message').count()).resolves.toBe(2);
    await expect(text(page.locator('li.message.inbound .body'))).resolves.toBe(
      'remember that the deploy window is Friday',
    );
    await expect(text(page.locator('li.message.outbound .body'))).resolves.toBe(
      'Noted: the deploy window is Friday.',
    );
    await expect(page.locator('li.message.inbound a.run-link').count()).resolves.toBe(1);
    await screenshot(page, 'chat');

    await openRun();
    await expect(text(page.locator('dl.summary .status'))).resolves.toBe('succeeded');
    const kinds = await attributes(page.locator('li.step'), 'data-kind');
    const order = ['model_request', 'tool_call', 'observation', 'reply'].map((k) =>
      kinds.indexOf(k),
    );
    expect(order.every((i) => i >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(kinds.filter((k) => k === 'model_request')).toHaveLength(2);

    const request = page.locator('li.step[data-kind=model_request]').first();
    const estimate = await text(request.locator('.estimate'));
    expect(estimate).toMatch(/^\d+ tokens$/);
    expect(Number.parseInt(estimate, 10)).toBeGreaterThan(0);
    // With the token captured the tracker's tools are offered too, and none of them or the
    // memory verbs is withheld (other packages' tools may be: mesh.github has no credential).
    await expect(request.locator('.offered code.tool').allTextContents()).resolves.toEqual([
      'request_input',
      'progress',
      'commit',
      'conversation_search',
      'remember',
      'recall',
      'amend',
      'forget',
      'tracker_search_issues',
      'tracker_get_issue',
      'tracker_create_issue',
    ]);
    const stillWithheld = await request.locator('.withheld li').allTextContents();
    expect(stillWithheld.filter((w) => /tracker_|remember|recall|amend|forget/.test(w))).toEqual(
      [],
    );

    const call = page.locator('li.step[data-kind=tool_call]');
    await expect(call.count()).resolves.toBe(1);
    await expect(text(call.locator('code.tool'))).resolves.toBe('remember');
    await expect(text(call.locator('.badge'))).resolves.toBe('query');
    await expect(text(call.locator('p').first())).resolves.toContain('internal');
    await expect(call.locator('pre').textContent()).resolves.toContain(
      '"content":"the deploy window is Friday"',
    );

    const observation = page.locator('li.step[data-kind=observation]');
    await expect(observation.count()).resolves.toBe(1);
    await expect(text(observation.locator('.badge'))).resolves.toBe('result');
    await expect(text(observation.locator('pre'))).resolves.toMatch(
      /^Remembered as memory [0-9a-f-]{36}\.$/,
    );

    await expect(text(page.locator('li.step[data-kind=reply] .body'))).resolves.toBe(
      'Noted: the deploy window is Friday.',
    );
    await screenshot(page, 'run');
  });

  it('refuses a form post without the CSRF token, or from another origin', async () => {
    await open('agents/demo/tools');
    const csrf = await page.locator('tr[data-tool="remember"] form input[name=csrf]').inputValue();
    expect(csrf.length).toBeGreaterThan(0);
    const target = `${server.url}agents/demo/tools/remember`;

    const missing = await page.request.post(target, {
      form: { enabled: 'false' },
      maxRedirects: 0,
    });
    expect(missing.status()).toBe(403);
    expect(await missing.text()).toContain('the form is stale or did not come from this UI');

    const wrong = await page.request.post(target, {
      form: { csrf: `${csrf}x`, enabled: 'false' },
      maxRedirects: 0,
    });
    expect(wrong.status()).toBe(403);

    const foreign = await page.request.post(target, {
      form: { csrf, enabled: 'false' },
      headers: { Origin: 'http://evil.example' },
      maxRedirects: 0,
    });
    expect(foreign.status()).toBe(403);
    expect(await foreign.text()).toContain('cross-origin form posts are refused');

    // The control: the same request context with the right token and no foreign origin is
    // accepted, so the refusals above are the CSRF checks and not a missing session.
    const control = await page.request.post(target, {
      form: { csrf, enabled: 'true' },
      maxRedirects: 0,
    });
    expect(control.status()).toBe(303);
    expect(control.headers()['location']).toBe('/agents/demo/tools');

    await page.reload();
    const toggle = page.locator('tr[data-tool="remember"] button.toggle');
    await expect(text(toggle)).resolves.toBe('Enabled');
    await expect(toggle.getAttribute('aria-label')).resolves.toBe('Disable remember');
    await expect(text(offerCell(page, 'remember', 'direct'))).resolves.toBe('offered');
  });

  it('connects the agent to a remote MCP server on the MCP tab and shows its catalog', async () => {
    const mcp = await startFakeMcpServer({
      acceptedTokens: new Set(['ui-mcp-token']),
      tools: [textTool('search', 'Search the index'), textTool('create', 'Create a record')],
    });
    try {
      await open('mcp');
      await page.fill('form[action="/mcp/providers"] input[name=slug]', 'idx');
      await page.fill('form[action="/mcp/providers"] input[name=url]', mcp.url);
      await page.check('form[action="/mcp/providers"] input[name=allow_loopback_http]');
      await submit(page, page.locator('form[action="/mcp/providers"] button'));
      await expect(text(page.locator('p.flash.ok'))).resolves.toBe('Registered idx.');

      await open('agents/demo/mcp');
      await page.selectOption('form[action$="/mcp/connect"] select[name=provider]', 'idx');
      await page.fill('form[action$="/mcp/connect"] input[name=token]', 'ui-mcp-token');
      await submit(page, page.locator('form[action$="/mcp/connect"] button'));
      await expect(text(page.locator('p.flash.ok'))).resolves.toBe(
        'Connected to idx: 2 tools on 1 page(s).',
      );
      const rows = page.locator('section[data-provider="idx"] tr[data-tool]');
      await expect(attributes(rows, 'data-tool')).resolves.toEqual(['idx__create', 'idx__search']);
      await expect(attributes(rows, 'data-status')).resolves.toEqual(['new', 'new']);
      await submit(page, page.getByRole('button', { name: 'Exclude idx__create' }));
      await expect(text(page.locator('p.flash.ok'))).resolves.toBe('idx__create is excluded.');
      expect(await page.content()).not.toContain('ui-mcp-token');
      await screenshot(page, 'mcp');

      // An image the tool returns is an artifact the run page shows, loaded under the page's CSP.
      mcp.state.call = () => ({
        content: [{ type: 'image', data: PNG_1X1, mimeType: 'image/png' }],
      });
      const called = await callToolAsOperator(server.mesh, {
        agent: 'demo',
        tool: 'idx__search',
        arguments: '{}',
        operator: 'test',
      });
      await open(`runs/${called.runId}`);
      const image = page.locator('ul.artifacts img');
      await expect
        .poll(() =>
          image.evaluate((el) => (el as unknown as { naturalWidth: number }).naturalWidth),
        )
        .toBe(1);
    } finally {
      await mcp.close();
    }
  });

  /** A run of the demo agent in a new conversation, leased to the test: the test is its worker. */
  async function heldRun(): Promise<{ lease: Lease; conversationId: string }> {
    const agent = await findAgent(server.mesh, 'demo');
    if (!agent) throw new Error('no demo agent');
    return heldRunOf(server.mesh.ledger, agent.id, { owner: 'browser-test', body: 'follow me' });
  }

  it("shows the sender's message at once and follows its own run: Send waits, the reply lands", async () => {
    // An agent whose model answers when the test says: the turn is still going after the post.
    const fake = await startFakeChatCompletions();
    try {
      await fakeModelAgent(server.mesh, fake.baseUrl, 'paced');
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      fake.enqueue({
        kind: 'after',
        gate,
        reply: { kind: 'completion', content: 'Worth the wait.' },
      });

      await open('agents/paced/chat');
      await page.fill('form.send textarea[name=body]', 'take your time');
      await submit(page, page.locator('form.send button'));
      // The post was answered while the model had not: the message is there, its run under way.
      await fake.waitForRequests(1);
      await expect(text(page.locator('li.message.inbound .body'))).resolves.toBe('take your time');
      await expect(page.locator('li.message.outbound').count()).resolves.toBe(0);
      await expect(text(page.locator('a.run-link'))).resolves.toMatch(/^run (queued|running)$/);
      await page.locator('html[data-live=following]').waitFor();
      await expect(page.locator('form.send button').isDisabled()).resolves.toBe(true);
      await expect(text(page.locator('[data-busy-note]'))).resolves.toBe(
        'paced is working on the last message…',
      );
      await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));
      await screenshot(page, 'chat-working');

      release();
      await page.locator('html[data-live=ended]').waitFor();
      await expect(text(page.locator('li.message.outbound .body'))).resolves.toBe(
        'Worth the wait.',
      );
      await expect(text(page.locator('a.run-link'))).resolves.toBe('run succeeded');
      await expect(page.locator('form.send button').isDisabled()).resolves.toBe(false);
      await expect(page.locator('[data-busy-note]').count()).resolves.toBe(0);
      await expect(page.evaluate(() => 'sameDocument' in globalThis)).resolves.toBe(true);
    } finally {
      await fake.close();
    }
  });

  it('follows a run live: new steps, the reply and the final state appear without a reload', async () => {
    const { ledger } = server.mesh;
    const run = await heldRun();
    await ledger.appendStep(run.lease, { kind: 'note', data: { phase: 'first' } });
    await open(`runs/${run.lease.runId}`);
    await expect(text(page.locator('dl.summary .status'))).resolves.toBe('running');
    await expect(page.locator('li.step').count()).resolves.toBe(1);
    await page.locator('html[data-live=following]').waitFor();
    // A mark on this document: a reload or a navigation would lose it.
    await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));

    await ledger.appendStep(run.lease, { kind: 'note', data: { phase: 'second' } });
    await page.locator('li.step[data-seq="2"]').waitFor();
    await expect(text(page.locator('li.step[data-seq="2"] pre'))).resolves.toContain('second');
    await ledger.recordReply(run.lease, {
      conversationId: run.conversationId,
      actor: 'agent:demo',
      body: 'Followed.',
    });
    await ledger.finish(run.lease, 'succeeded', null);
    await page.locator('html[data-live=ended]').waitFor();
    await expect(text(page.locator('dl.summary .status'))).resolves.toBe('succeeded');
    await expect(text(page.locator('li.step[data-kind=reply] .body'))).resolves.toBe('Followed.');
    await expect(attributes(page.locator('li.step'), 'data-seq')).resolves.toEqual(['1', '2', '3']);
    await expect(page.evaluate(() => 'sameDocument' in globalThis)).resolves.toBe(true);

    // The chat page of a conversation whose run is still going shows the reply when it lands.
    const chat = await heldRun();
    const chatPage = await page.goto(
      `${server.url}agents/demo/chat?conversation=${chat.conversationId}`,
    );
    expect(chatPage?.status()).toBe(200);
    await expect(text(page.locator('a.run-link'))).resolves.toBe('run running');
    await page.locator('html[data-live=following]').waitFor();
    await page.evaluate(() => Object.assign(globalThis, { sameDocument: true }));
    await ledger.recordReply(chat.lease, {
      conversationId: chat.conversationId,
      actor: 'agent:demo',
      body: 'Live reply.',
    });
    await ledger.finish(chat.lease, 'succeeded', null);
    await page.locator('html[data-live=ended]').waitFor();
    await expect(text(page.locator('li.message.outbound .body'))).resolves.toBe('Live reply.');
    await expect(text(page.locator('a.run-link'))).resolves.toBe('run succeeded');
    await expect(page.evaluate(() => 'sameDocument' in globalThis)).resolves.toBe(true);
    await screenshot(page, 'live-chat');
  });
});
