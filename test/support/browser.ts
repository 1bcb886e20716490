import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createOperatorToken } from '../../src/app/operators/operator-auth.ts';
import type { Db } from '../../src/store/db.ts';

/** Where the browser tests leave their screenshots (under the git-ignored test-output/). */
export const SCREENSHOT_DIR = join(process.cwd(), 'test-output', 'screenshots');

/** Debian's chromium, headless, with nothing running in the background. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--no-first-run',
    ],
  });
}

/** Saves a full-page screenshot of the current page as `test-output/screenshots/<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Logs in through the login form with an operator token and waits for the agents page. */
export async function login(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}login`);
  await page.fill('input[name=token]', token);
  const [response] = await Promise.all([
    page.waitForResponse(
      (r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/login',
    ),
    page.click('form[action="/login"] button'),
  ]);
  if (response.status() !== 303)
    throw new Error(`the login form was answered ${response.status()}, not a redirect`);
  await page.waitForURL((u) => u.pathname === '/agents');
}

/**
 * A new operator (a token minted under `label`) signed in on a page of its own browser context:
 * the page, and the actor the UI attributes what they do to. The context is closed with `browser`.
 */
export async function signedInOperator(
  browser: Browser,
  db: Db,
  url: string,
  label: string,
  options: { viewport?: { width: number; height: number }; timeoutMs?: number } = {},
): Promise<{ page: Page; actor: string }> {
  const minted = await createOperatorToken(db, label);
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1100, height: 900 },
  });
  const page = await context.newPage();
  page.setDefaultTimeout(options.timeoutMs ?? 15_000);
  await login(page, url, minted.token);
  return { page, actor: `operator:${label}:${minted.record.id.slice(0, 8)}` };
}
