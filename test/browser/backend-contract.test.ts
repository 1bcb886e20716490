import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BrowserBackend } from '../../src/browser/backend.ts';
import { browserbaseBackend } from '../../src/browser/backends/browserbase.ts';
import { driveOverCdp } from '../../src/browser/backends/cdp-driver.ts';
import { localBrowserBackend } from '../../src/browser/backends/local.ts';
import { createGuardedFetch } from '../../src/egress/guarded-fetch.ts';
import { hasCode } from '../../src/tool/errors.ts';
import { startBrowserbaseFake, type BrowserbaseFake } from '../support/browserbase-fake.ts';
import { startBrowserVendorFake, type VendorFake } from '../support/browser-vendor-fakes.ts';
import { steelBackend } from '../../src/browser/backends/steel.ts';
import { cloudflareBrowserBackend } from '../../src/browser/backends/cloudflare.ts';
import { processAlive } from '../support/process.ts';
import { startTestSite, type TestSite } from '../support/test-site.ts';
import { loopbackSession } from '../support/browser-session.ts';

const BB_KEY = `bb_live_${randomUUID()}`;
const STEEL_KEY = `ste-${randomUUID()}`;
const CF_TOKEN = `cf-${randomUUID()}`;

interface Subject {
  readonly name: string;
  backend(): BrowserBackend;
  /** Whether the vendor saw the session's release (its own record of it). */
  released(externalId: string): boolean;
}

let site: TestSite;
let bb: BrowserbaseFake;
let steel: VendorFake;
let cloudflare: VendorFake;

beforeAll(async () => {
  [site, bb, steel, cloudflare] = await Promise.all([
    startTestSite(),
    startBrowserbaseFake({ apiKey: BB_KEY }),
    startBrowserVendorFake('steel', { apiKey: STEEL_KEY }),
    startBrowserVendorFake('cloudflare', { apiKey: CF_TOKEN, accountId: 'acct-1' }),
  ]);
}, 60_000);

afterAll(async () => {
  await Promise.all([bb?.close(), steel?.close(), cloudflare?.close()]);
  await site?.close();
});

const guarded = () => createGuardedFetch({ allowLoopbackHttp: true }) as typeof fetch;

const subjects: Subject[] = [
  {
    name: 'local',
    backend: () => localBrowserBackend(),
    released: (id) => !processAlive(Number(id.split(':')[0])),
  },
  {
    name: 'browserbase',
    backend: () =>
      browserbaseBackend({
        apiKey: BB_KEY,
        baseUrl: bb.baseUrl,
        fetch: createGuardedFetch({ allowLoopbackHttp: true }) as typeof fetch,
      }),
    released: (id) => bb.sessions.get(id)?.released === true,
  },
  {
    name: 'steel',
    backend: () => steelBackend({ apiKey: STEEL_KEY, baseUrl: steel.baseUrl, fetch: guarded() }),
    released: (id) => steel.sessions.get(id)?.released === true,
  },
  {
    name: 'cloudflare',
    backend: () =>
      cloudflareBrowserBackend({
        apiToken: CF_TOKEN,
        accountId: 'acct-1',
        baseUrl: cloudflare.baseUrl,
        fetch: guarded(),
      }),
    released: (id) => cloudflare.sessions.get(id)?.released === true,
  },
];

/*
 * One contract, every browser backend: a session is provisioned for a run, driven over CDP by
 * the one driver, released by its id (idempotently, from a fresh client as another process would),
 * and what a backend declares (live view, recordings) it delivers. Vendors are loopback fakes of
 * their documented session APIs handing out a real local Chromium behind the vendor's own auth.
 */
describe.each(subjects)('the browser backend contract: $name', (subject) => {
  it('provisions a session that the driver can use, and releases it by its id', async () => {
    const backend = subject.backend();
    const runId = randomUUID();
    const rented = await backend.provision({ ...loopbackSession({ timeoutMs: 120_000 }), runId });
    expect(rented.cdp.url).toMatch(/^wss?:\/\//);
    expect(typeof rented.liveViewUrl === 'string').toBe(backend.capabilities.liveView);
    const session = await driveOverCdp(rented.cdp);
    try {
      const landed = await session.navigate(`${site.url}contact`);
      expect(landed.title).toBe('Contact');
      const snapshot = await session.read('snapshot');
      expect(snapshot.markdown).toMatch(/\[e1\] textbox "Your name"/);
      await session.act({ kind: 'type', ref: 'e1', text: 'Grace' });
      const sent = await session.act({ kind: 'click', ref: 'e4' });
      expect(sent).toMatchObject({ navigated: true, title: 'Thanks' });
      const shot = await session.screenshot(false);
      expect(shot.png.byteLength).toBeGreaterThan(1000);
    } finally {
      await session.disconnect();
    }
    // A backend that can reconnect hands a fresh client (another process) the same browser, on
    // the page it was left at.
    const fresh = subject.backend();
    if (fresh.attach) {
      const again = await driveOverCdp(await fresh.attach(rented.externalId));
      try {
        expect((await again.read('text')).title).toBe('Thanks');
      } finally {
        await again.disconnect();
      }
    }
    expect(subject.released(rented.externalId)).toBe(false);
    await subject.backend().release(rented.externalId);
    await expect.poll(() => subject.released(rented.externalId)).toBe(true);
    await subject.backend().release(rented.externalId);
    // A released session cannot be reconnected to, and says so.
    if (fresh.attach)
      await expect(fresh.attach(rented.externalId)).rejects.toMatchObject({
        code: 'browser_backend_unavailable',
      });
    if (backend.capabilities.recordings) {
      const recording = await backend.recording?.(rented.externalId);
      expect(recording?.mediaType).toBe('application/json');
      expect(Array.isArray(JSON.parse(Buffer.from(recording?.content ?? []).toString()))).toBe(
        true,
      );
    }
    await backend.close();
  }, 60_000);
});

describe('the vendors’ auth', () => {
  it('refuses Steel and Cloudflare sessions with a wrong key, naming the status, never the key', async () => {
    const spec = {
      sessionId: randomUUID(),
      runId: randomUUID(),
      agentId: randomUUID(),
      timeoutMs: 60_000,
    };
    const wrongSteel = await steelBackend({
      apiKey: 'ste-wrong',
      baseUrl: steel.baseUrl,
      fetch: guarded(),
    })
      .provision(spec)
      .catch((e: unknown) => e);
    expect((wrongSteel as Error).message).toBe('Steel session creation failed: HTTP 401');
    const wrongCf = await cloudflareBrowserBackend({
      apiToken: 'cf-wrong',
      accountId: 'acct-1',
      baseUrl: cloudflare.baseUrl,
      fetch: guarded(),
    })
      .provision(spec)
      .catch((e: unknown) => e);
    expect((wrongCf as Error).message).toBe(
      'Cloudflare Browser Run session acquisition failed: HTTP 401',
    );
    expect(JSON.stringify([wrongSteel, wrongCf])).not.toMatch(/ste-wrong|cf-wrong/);
  });

  it('refuses a Cloudflare CDP connection without the bearer token', async () => {
    const backend = subjects[3]!.backend();
    const rented = await backend.provision(loopbackSession());
    await expect(driveOverCdp({ url: rented.cdp.url }, { timeoutMs: 5_000 })).rejects.toThrow();
    await backend.release(rented.externalId);
  });
});

describe('the Browserbase backend', () => {
  it('refuses with a typed error naming the status when the key is wrong, never the key', async () => {
    const backend = browserbaseBackend({
      apiKey: 'bb_live_wrong',
      baseUrl: bb.baseUrl,
      fetch: createGuardedFetch({ allowLoopbackHttp: true }) as typeof fetch,
    });
    const refused = await backend.provision(loopbackSession()).catch((e: unknown) => e);
    expect(hasCode(refused, 'browser_backend_unavailable')).toBe(true);
    expect((refused as Error).message).toBe('Browserbase session creation failed: HTTP 401');
    expect(JSON.stringify(refused)).not.toContain('bb_live_wrong');
  });

  it('is refused a CDP connection without the session’s signing key', async () => {
    const backend = subjects[1]!.backend();
    const rented = await backend.provision(loopbackSession());
    const forged = rented.cdp.url.replace(/signingKey=[^&]+/, 'signingKey=forged');
    await expect(driveOverCdp({ url: forged }, { timeoutMs: 5_000 })).rejects.toThrow();
    await backend.release(rented.externalId);
  });
});
