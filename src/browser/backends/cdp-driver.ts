import {
  chromium,
  type Browser,
  type BrowserContext,
  type Frame,
  type Locator,
  type Page,
  type Request,
} from 'playwright-core';
import { BrowserActionError, type BrowserAction } from '../../tool/browser.ts';
import { maskedUrl } from '../masked-url.ts';
import type { CdpEndpoint, DrivenSession } from '../backend.ts';
import { readPageExpression } from '../page-reader.ts';

/** How long one action may take (a page load, a click that waits for its element). */
export const ACTION_TIMEOUT_MS = 30_000;
/** How long after a click or key press the driver looks for a navigation it started. */
const NAVIGATION_LOOK_MS = 30;
const REF = /^e\d{1,6}$/;

/**
 * Decides whether the session may fetch a URL (every request of every page, not only the ones
 * the model asks for): undefined when it may, else why not (shown to the model).
 */
export type RequestGuard = (url: URL) => Promise<string | undefined>;

/** How a session is driven: its request guard, action timeout, and whether Mesh records it. */
export interface CdpDriveOptions {
  readonly guard?: RequestGuard;
  readonly timeoutMs?: number;
  /**
   * Keep Mesh's own recording of the session (for a backend that records none): each action
   * with the page it left and a screenshot after it, each page the session went to, each
   * request refused.
   */
  readonly journal?: boolean;
}

/**
 * Connects to a session over CDP with playwright-core and drives its first page: the one way
 * every backend's sessions are driven. With a guard, every request the browser makes is checked
 * first and refused when the guard says so.
 */
export async function driveOverCdp(
  endpoint: CdpEndpoint,
  options: CdpDriveOptions = {},
): Promise<DrivenSession> {
  const timeout = options.timeoutMs ?? ACTION_TIMEOUT_MS;
  const browser: Browser = await chromium.connectOverCDP(endpoint.url, {
    ...(endpoint.headers ? { headers: { ...endpoint.headers } } : {}),
    timeout,
  });
  const context = browser.contexts()[0] ?? (await browser.newContext());
  const page: Page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(timeout);
  const session = new CdpSession(browser, page, timeout, options);
  if (options.guard) await session.guard(context, options.guard);
  return session;
}

/** A session's first page, driven: every action through {@link CdpSession.acting}. */
class CdpSession implements DrivenSession {
  /** Why the latest refused request was refused: a failed navigation says it. */
  #refused: string | undefined;
  readonly #guard: RequestGuard | undefined;
  readonly #journal: JournalEntry[] | undefined;
  readonly #started = Date.now();
  readonly #browser: Browser;
  readonly #page: Page;
  readonly #timeout: number;

  constructor(browser: Browser, page: Page, timeout: number, options: CdpDriveOptions) {
    this.#browser = browser;
    this.#page = page;
    this.#timeout = timeout;
    this.#guard = options.guard;
    this.#journal = options.journal ? [] : undefined;
    const journal = this.#journal;
    if (journal)
      page.on('framenavigated', (frame) => {
        if (frame === page.mainFrame())
          journal.push({ at_ms: this.#at(), kind: 'page', url: maskedUrl(frame.url()) });
      });
  }

  /** Checks every request and WebSocket the browser opens; a refused one is aborted. */
  async guard(context: BrowserContext, guard: RequestGuard): Promise<void> {
    await context.route('**/*', async (route) => {
      let url: URL;
      try {
        url = new URL(route.request().url());
      } catch {
        return route.abort('blockedbyclient');
      }
      const reason =
        url.protocol === 'data:' || url.protocol === 'blob:' ? undefined : await guard(url);
      if (reason === undefined) return route.continue();
      this.#refused = reason;
      this.#journal?.push({ at_ms: this.#at(), kind: 'refused', url: url.origin, reason });
      return route.abort('blockedbyclient');
    });
    await context.routeWebSocket(/.*/, async (ws) => {
      const reason = await guard(new URL(ws.url()));
      if (reason === undefined) ws.connectToServer();
      else {
        this.#refused = reason;
        await ws.close({ code: 1008, reason: 'refused by egress policy' });
      }
    });
  }

  async navigate(raw: string): Promise<Awaited<ReturnType<DrivenSession['navigate']>>> {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new BrowserActionError('bad_url', 'field `url` is not an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new BrowserActionError(
        'bad_url',
        `field \`url\` must be http or https, not ${url.protocol}`,
      );
    if (this.#guard) {
      const reason = await this.#guard(url);
      if (reason !== undefined)
        throw new BrowserActionError('egress_refused', `navigation was refused: ${reason}`);
    }
    this.#refused = undefined;
    return this.#acting('navigation', async () => {
      const response = await this.#page.goto(url.href, { waitUntil: 'domcontentloaded' });
      await this.#note('navigate', { to: maskedUrl(url.href), status: response?.status() ?? null });
      return { ...(await this.#state()), status: response?.status() ?? null };
    });
  }

  read(mode: Parameters<DrivenSession['read']>[0]): ReturnType<DrivenSession['read']> {
    return this.#acting('reading the page', async () => {
      // The title comes with the reading: one round trip to the page, not two.
      const read = await this.#page.evaluate<{ markdown: string; refs: number; title: string }>(
        readPageExpression(mode),
      );
      return {
        url: this.#pageUrl(),
        title: read.title,
        mode,
        markdown: read.markdown,
        refs: read.refs,
      };
    });
  }

  act(action: BrowserAction): ReturnType<DrivenSession['act']> {
    return this.#acting(action.kind, async () => {
      const navigated = await this.#perform(action);
      // What was typed is in the call's step; the journal keeps only its length.
      const detail =
        action.kind === 'type'
          ? { ref: action.ref, characters: action.text.length, submit: action.submit === true }
          : { ...action };
      await this.#note(action.kind, { ...detail, navigated });
      return { ...(await this.#state()), navigated };
    });
  }

  screenshot(fullPage: boolean): ReturnType<DrivenSession['screenshot']> {
    return this.#acting('the screenshot', async () => {
      // A page that is not the window's front tab is not painted, and would never be shot.
      await this.#page.bringToFront();
      const png = await this.#page.screenshot({ type: 'png', fullPage });
      return { ...(await this.#state()), png: new Uint8Array(png) };
    });
  }

  journal(): ReturnType<DrivenSession['journal']> {
    if (!this.#journal) return undefined;
    const body = { format: 'mesh.browser-journal/1', events: this.#journal };
    return { mediaType: 'application/json', content: Buffer.from(JSON.stringify(body)) };
  }

  async disconnect(): Promise<void> {
    await this.#browser.close().catch(() => undefined);
  }

  /** Does one action on the page; whether it started a navigation. */
  async #perform(action: BrowserAction): Promise<boolean> {
    switch (action.kind) {
      case 'click': {
        const el = await this.#located(action.ref);
        return this.#mayNavigate(() => el.click());
      }
      case 'type': {
        const el = await this.#located(action.ref);
        await el.fill(action.text);
        return action.submit ? this.#mayNavigate(() => el.press('Enter')) : false;
      }
      case 'select': {
        const el = await this.#located(action.ref);
        const chosen = await el
          .selectOption(action.value)
          .catch(async () => el.selectOption({ label: action.value }));
        if (chosen.length === 0)
          throw new BrowserActionError(
            'not_actionable',
            'no option of that select matches `value`',
          );
        return false;
      }
      case 'press': {
        const el = action.ref === undefined ? undefined : await this.#located(action.ref);
        return this.#mayNavigate(() =>
          el ? el.press(action.key) : this.#page.keyboard.press(action.key),
        );
      }
      case 'scroll': {
        if (action.ref !== undefined)
          await (await this.#located(action.ref)).scrollIntoViewIfNeeded();
        else await this.#page.mouse.wheel(0, action.direction === 'down' ? 700 : -700);
        return false;
      }
    }
  }

  #at(): number {
    return Date.now() - this.#started;
  }

  // A GET form's credentials ride in the URL: every URL Mesh shows or keeps is masked first.
  #pageUrl(): string {
    return maskedUrl(this.#page.url());
  }

  async #state(): Promise<{ url: string; title: string }> {
    return { url: this.#pageUrl(), title: await this.#page.title().catch(() => '') };
  }

  /** Notes an action in the journal, with the page it left and what the page looked like. */
  async #note(kind: string, detail: Record<string, unknown>): Promise<void> {
    if (!this.#journal) return;
    const shot = await this.#page
      .screenshot({ type: 'jpeg', quality: 50 })
      .then((b) => `data:image/jpeg;base64,${b.toString('base64')}`)
      .catch(() => undefined);
    this.#journal.push({
      at_ms: this.#at(),
      kind,
      ...detail,
      url: this.#pageUrl(),
      title: await this.#page.title().catch(() => ''),
      ...(shot ? { screenshot: shot } : {}),
    });
  }

  async #located(ref: string): Promise<Locator> {
    if (!REF.test(ref))
      throw new BrowserActionError(
        'unknown_ref',
        'field `ref` must be a ref from the last browser_read snapshot, like e12',
      );
    const locator = this.#page.locator(`[data-mesh-ref="${ref}"]`);
    if ((await locator.count()) === 0)
      throw new BrowserActionError(
        'unknown_ref',
        `no element has ref ${ref} on this page; read the page again (browser_read) for fresh refs`,
      );
    return locator.first();
  }

  /**
   * Runs an action that may start a navigation (a click, a key press) and, when it did, waits for
   * the new page to load. A navigation an action starts is requested within the action's own
   * task, so a short look after it tells; an action that starts none costs only that look.
   */
  async #mayNavigate(action: () => Promise<void>): Promise<boolean> {
    const page = this.#page;
    const before = page.url();
    let requested = false;
    let navigated = false;
    const onRequest = (request: Request) => {
      if (request.isNavigationRequest() && request.frame() === page.mainFrame()) requested = true;
    };
    const onNavigate = (frame: Frame) => {
      if (frame === page.mainFrame()) navigated = true;
    };
    page.on('request', onRequest);
    page.on('framenavigated', onNavigate);
    try {
      await action();
      if (!requested && !navigated) await page.waitForTimeout(NAVIGATION_LOOK_MS);
      if (requested && !navigated)
        await page
          .waitForEvent('framenavigated', { predicate: (f) => f === page.mainFrame() })
          .catch(() => undefined);
      if (requested || navigated)
        await page.waitForLoadState('domcontentloaded').catch(() => undefined);
    } finally {
      page.off('request', onRequest);
      page.off('framenavigated', onNavigate);
    }
    return navigated || page.url() !== before;
  }

  /** Runs an action, its failures made typed errors that say what went wrong, never a value. */
  async #acting<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof BrowserActionError) throw error;
      const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
      if (/Timeout \d+ms exceeded/.test(message))
        throw new BrowserActionError(
          'timeout',
          `${what} did not finish within ${this.#timeout} ms`,
        );
      if (this.#refused !== undefined && /ERR_BLOCKED_BY_CLIENT/.test(message)) {
        const reason = this.#refused;
        this.#refused = undefined;
        throw new BrowserActionError('egress_refused', `${what} was refused: ${reason}`);
      }
      if (
        /not (?:an? )?(?:<select>|select|input|editable|visible|enabled)|Element is not/i.test(
          message,
        )
      )
        throw new BrowserActionError('not_actionable', `${what} failed: ${message}`);
      throw new BrowserActionError('navigation_failed', `${what} failed: ${message}`);
    }
  }
}

/** One entry of Mesh's own recording of a session. */
interface JournalEntry {
  readonly at_ms: number;
  readonly kind: string;
  readonly [detail: string]: unknown;
}
