import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localBrowserBackend } from '../../src/browser/backends/local.ts';
import { driveOverCdp } from '../../src/browser/backends/cdp-driver.ts';
import { browserEgressGuard } from '../../src/browser/egress.ts';
import type { DrivenSession } from '../../src/browser/backend.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { processAlive } from '../support/process.ts';
import { startTestSite, type TestSite } from '../support/test-site.ts';
import { loopbackSession } from '../support/browser-session.ts';

/*
 * The local (development) browser backend and the CDP driver every backend's sessions use: a
 * real Chromium, a real site on loopback.
 */
describe('the local browser backend, driven over CDP', () => {
  const backend = localBrowserBackend();
  let site: TestSite;
  let externalId: string;
  let session: DrivenSession;

  beforeAll(async () => {
    site = await startTestSite();
    const provisioned = await backend.provision(loopbackSession());
    externalId = provisioned.externalId;
    expect(provisioned.cdp.url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/devtools\/browser\//);
    session = await driveOverCdp(provisioned.cdp, {
      guard: browserEgressGuard({ allowLoopback: true }),
    });
  }, 60_000);

  afterAll(async () => {
    await session?.disconnect();
    await backend.close();
    await site?.close();
  });

  it('navigates, reads text and a snapshot with refs, fills and submits a form', async () => {
    const landed = await session.navigate(site.url);
    expect(landed).toMatchObject({ url: site.url, title: 'Acme Support', status: 200 });
    const text = await session.read('text');
    expect(text.markdown).toContain('We answer within a day.');
    expect(text.markdown).not.toContain('hidden text');
    const snapshot = await session.read('snapshot');
    expect(snapshot.markdown).toContain('# Acme Support');
    expect(snapshot.markdown).toContain('- Billing');
    expect(snapshot.markdown).toMatch(/\[e1\] link "Contact us" → \/contact/);

    const clicked = await session.act({ kind: 'click', ref: 'e1' });
    expect(clicked).toMatchObject({ navigated: true, title: 'Contact' });
    const form = await session.read('snapshot');
    const ref = (pattern: RegExp) => pattern.exec(form.markdown)?.[1] ?? 'missing';
    expect(form.markdown).toMatch(/textbox "Your name" \(text, empty\) required/);
    await session.act({ kind: 'type', ref: ref(/\[(e\d+)\] textbox "Your name"/), text: 'Ada' });
    await session.act({ kind: 'select', ref: ref(/\[(e\d+)\] combobox/), value: 'Shipping' });
    await session.act({ kind: 'click', ref: ref(/\[(e\d+)\] checkbox/) });
    const filled = await session.read('snapshot');
    // What a field holds is never read out: only that it is filled.
    expect(filled.markdown).toMatch(/textbox "Your name" \(text, filled\)/);
    expect(filled.markdown).not.toContain('Ada');
    expect(filled.markdown).toMatch(/checkbox "Urgent" checked/);
    const sent = await session.act({ kind: 'click', ref: ref(/\[(e\d+)\] button "Send"/) });
    expect(sent).toMatchObject({ navigated: true, title: 'Thanks' });
    expect(site.posts.at(-1)).toEqual({ name: 'Ada', topic: 'shipping', urgent: 'yes' });
    expect((await session.read('text')).markdown).toContain('request is number 4127');

    const shot = await session.screenshot(false);
    expect(Buffer.from(shot.png.slice(0, 8)).toString('hex')).toBe('89504e470d0a1a0a');
  }, 60_000);

  it('refuses a stale or malformed ref, naming what to do, without acting', async () => {
    const stale = await session.act({ kind: 'click', ref: 'e999' }).catch((e: unknown) => e);
    expect(hasCode(stale, 'browser_action')).toBe(true);
    expect((stale as Error).message).toContain('read the page again');
    const bad = await session.act({ kind: 'click', ref: 'x"]' }).catch((e: unknown) => e);
    expect((bad as Error).message).toContain('field `ref`');
  });

  it('refuses navigation to private, link-local and metadata addresses, and non-web schemes', async () => {
    for (const url of [
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://[fd00::1]/',
      'http://192.168.1.1/admin',
    ]) {
      const refused = await session.navigate(url).catch((e: unknown) => e);
      expect(hasCode(refused, 'browser_action'), url).toBe(true);
      expect((refused as { data?: { reason?: string } }).data?.reason).toBe('egress_refused');
    }
    const file = await session.navigate('file:///etc/passwd').catch((e: unknown) => e);
    expect((file as Error).message).toContain('must be http or https');
  });

  it('refuses what a page itself fetches from a forbidden address, not only navigations', async () => {
    const guard = browserEgressGuard({ allowLoopback: false });
    expect(await guard(new URL(site.url))).toMatch(/loopback address/);
    expect(await guard(new URL('http://localhost/'))).toMatch(/localhost \(.*\) is a loopback/);
    expect(await guard(new URL('http://169.254.169.254/'))).toMatch(/link-local/);
    expect(await guard(new URL('https://93.184.216.34/'))).toBeUndefined();
  });

  it('masks the credentials a GET form put in the URL, in results, reads and the recording', async () => {
    const rented = await backend.provision(loopbackSession());
    const journaled = await driveOverCdp(rented.cdp, {
      guard: browserEgressGuard({ allowLoopback: true }),
      journal: true,
    });
    await journaled.navigate(`${site.url}legacy-signin`);
    const form = await journaled.read('snapshot');
    const button = /\[(e\d+)\] button "Sign in"/.exec(form.markdown)?.[1] ?? 'missing';
    const clicked = await journaled.act({ kind: 'click', ref: button });
    const read = await journaled.read('text');
    const direct = await journaled.navigate(`${site.url}legacy-account?user=grace&pw=p4ss-word-77`);
    const recording = Buffer.from(journaled.journal()?.content ?? []).toString('utf8');
    await journaled.disconnect();
    await backend.release(rented.externalId);
    // The form really sent them in the URL: the site saw the request.
    expect(site.paths).toContain('/legacy-account');
    expect(read.url).toBe(`${site.url}legacy-account?user=grace&password=****&token=****`);
    expect(direct.url).toBe(`${site.url}legacy-account?user=grace&pw=****`);
    const shown = JSON.stringify([clicked, read, direct]) + recording;
    for (const secret of ['correct-horse-42', 'csrf-tok-9f8e7d6c', 'p4ss-word-77'])
      expect(shown).not.toContain(secret);
    expect(recording).toContain('password=****');
  });

  it('keeps its own recording when asked: each action with a screenshot, typed text by its length only', async () => {
    const rented = await backend.provision(loopbackSession());
    const journaled = await driveOverCdp(rented.cdp, {
      guard: browserEgressGuard({ allowLoopback: true }),
      journal: true,
    });
    await journaled.navigate(`${site.url}contact`);
    await journaled.read('snapshot');
    await journaled.act({ kind: 'type', ref: 'e1', text: 'a secret-ish name' });
    await journaled.act({ kind: 'click', ref: 'e4' });
    await journaled.navigate('http://169.254.169.254/').catch(() => undefined);
    const recording = journaled.journal();
    await journaled.disconnect();
    await backend.release(rented.externalId);
    expect(recording?.mediaType).toBe('application/json');
    const text = Buffer.from(recording?.content ?? []).toString('utf8');
    const body = JSON.parse(text) as { format: string; events: Record<string, unknown>[] };
    expect(body.format).toBe('mesh.browser-journal/1');
    const actions = body.events.filter((e) => e['kind'] !== 'page');
    expect(actions.map((e) => e['kind'])).toEqual(['navigate', 'type', 'click']);
    expect(
      actions.every((e) => String(e['screenshot']).startsWith('data:image/jpeg;base64,')),
    ).toBe(true);
    expect(actions[1]).toMatchObject({ ref: 'e1', characters: 17 });
    expect(actions[2]).toMatchObject({ navigated: true, title: 'Thanks' });
    expect(
      body.events.some((e) => e['kind'] === 'page' && String(e['url']).endsWith('/contact')),
    ).toBe(true);
    expect(text).not.toContain('secret-ish');
  }, 60_000);

  it('reconnects to a live session by its id from any process, on the page it was left at, and shows its screen', async () => {
    await session.navigate(`${site.url}contact`);
    // Another backend object (as another process would have) finds the session's endpoint.
    const endpoint = await localBrowserBackend().attach!(externalId);
    const again = await driveOverCdp(endpoint);
    try {
      const reading = await again.read('text');
      expect(reading.title).toBe('Contact');
      // Mesh's Live View: a screencast of the same page, and a person's input relayed to it.
      const { startScreencast } = await import('../../src/browser/backends/screencast.ts');
      const cast = await startScreencast(endpoint);
      const frame = await new Promise<{ width: number; jpeg: string }>((resolve) => {
        const stop = cast.onFrame((f) => {
          stop();
          resolve(f);
        });
      });
      expect(frame.width).toBeGreaterThan(0);
      expect(Buffer.from(frame.jpeg, 'base64').subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
      await cast.input({ kind: 'key', key: 'Tab' });
      await cast.input({ kind: 'text', text: 'Typed by a person' });
      await cast.close();
      // Closing the Live View's connection leaves the session and its page as they were.
      expect((await session.read('snapshot')).markdown).toMatch(/textbox "Your name".*filled/);
    } finally {
      await again.disconnect();
    }
    // A session whose browser is gone cannot be reconnected to, said so.
    await expect(localBrowserBackend().attach!('999999:/tmp/mesh-browser-gone')).rejects.toThrow(
      'no longer running',
    );
  }, 60_000);

  it('ends the Chromium process and its profile on release, from any process, idempotently', async () => {
    const [pid, profile] = [
      Number(externalId.split(':')[0]),
      externalId.slice(externalId.indexOf(':') + 1),
    ];
    expect(existsSync(profile)).toBe(true);
    await session.disconnect();
    // Another backend object (as another process would have) releases it by its id.
    await localBrowserBackend().release(externalId);
    expect(existsSync(profile)).toBe(false);
    // Killed; gone once this process (its parent) has reaped it.
    await expect.poll(() => processAlive(pid)).toBe(false);
    await localBrowserBackend().release(externalId);
  });
});
