/**
 * bench:browser — a browser session's provisioning (the local backend's Chromium started and
 * connected over CDP, ready for its first action) p50/p99, and the per-action overhead of Mesh's
 * driver (its egress guard on every request, refs, the navigation look after a click) against
 * driving the same Chromium directly with playwright-core, both measured in this run on one
 * loopback page, interleaved so load falls on both alike.
 */
import { chromium } from 'playwright-core';
import { localBrowserBackend } from '../src/browser/backends/local.ts';
import { driveOverCdp } from '../src/browser/backends/cdp-driver.ts';
import { browserEgressGuard } from '../src/browser/egress.ts';
import { loopbackSession } from '../test/support/browser-session.ts';
import { startTestSite } from '../test/support/test-site.ts';
import { median, percentile } from './stats.ts';

const PROVISIONS = Number(process.env['BENCH_PROVISIONS'] ?? 10);
const ACTIONS = Number(process.env['BENCH_ACTIONS'] ?? 60);

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const f = (n: number) => n.toFixed(1);
// The test site is on loopback; both drivers' pages go through the session's egress proxy.
const spec = () => loopbackSession();

const site = await startTestSite();
const backend = localBrowserBackend();
const guard = browserEgressGuard({ allowLoopback: true });
try {
  const provision: number[] = [];
  for (let i = 0; i < PROVISIONS; i++) {
    const start = process.hrtime.bigint();
    const rented = await backend.provision(spec());
    const session = await driveOverCdp(rented.cdp, { guard });
    provision.push(ms(start));
    await session.disconnect();
    await backend.release(rented.externalId);
  }

  // One Chromium, two pages: one driven by Mesh's driver, one by playwright-core directly.
  const rented = await backend.provision(spec());
  const mesh = await driveOverCdp(rented.cdp, { guard });
  const direct = await chromium.connectOverCDP(rented.cdp.url);
  const page = await direct.contexts()[0]!.newPage();
  const contact = `${site.url}contact`;

  const timings = {
    navigate: { mesh: [] as number[], direct: [] as number[] },
    read: { mesh: [] as number[], direct: [] as number[] },
    click: { mesh: [] as number[], direct: [] as number[] },
    screenshot: { mesh: [] as number[], direct: [] as number[] },
  };
  const time = async (into: number[], fn: () => Promise<unknown>) => {
    const start = process.hrtime.bigint();
    await fn();
    into.push(ms(start));
  };
  for (let i = 0; i < ACTIONS + 5; i++) {
    const keep = i >= 5;
    const t = (k: keyof typeof timings, who: 'mesh' | 'direct') =>
      keep ? timings[k][who] : ([] as number[]);
    await time(t('navigate', 'mesh'), () => mesh.navigate(contact));
    await time(t('navigate', 'direct'), () =>
      page.goto(contact, { waitUntil: 'domcontentloaded' }),
    );
    await time(t('read', 'mesh'), () => mesh.read('text'));
    await time(t('read', 'direct'), () => page.evaluate('document.body.innerText'));
    // The checkbox: a click that starts no navigation (the driver looks for one all the same).
    await mesh.read('snapshot');
    await time(t('click', 'mesh'), () => mesh.act({ kind: 'click', ref: 'e3' }));
    await time(t('click', 'direct'), () => page.locator('input[type=checkbox]').click());
    await time(t('screenshot', 'mesh'), () => mesh.screenshot(false));
    await time(t('screenshot', 'direct'), async () => {
      await page.bringToFront();
      await page.screenshot({ type: 'png' });
    });
  }
  await direct.close();
  await mesh.disconnect();
  await backend.release(rented.externalId);

  console.log(
    `session provision (Chromium started, connected over CDP): p50 ${f(median([...provision]))} ms, p99 ${f(percentile([...provision], 99))} ms (${PROVISIONS} sessions)`,
  );
  for (const [action, { mesh: m, direct: d }] of Object.entries(timings)) {
    const pm = median([...m]);
    const pd = median([...d]);
    console.log(
      `${action.padEnd(10)} Mesh driver p50 ${f(pm)} ms | playwright-core direct p50 ${f(pd)} ms | overhead ${f(pm - pd)} ms (${(pm / pd).toFixed(2)}x, ${m.length} actions)`,
    );
  }
} finally {
  await backend.close();
  await site.close();
}
