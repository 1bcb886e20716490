import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DrivenSession } from '../../src/browser/backend.ts';
import { driveOverCdp } from '../../src/browser/backends/cdp-driver.ts';
import { localBrowserBackend } from '../../src/browser/backends/local.ts';
import { browserEgressGuard } from '../../src/browser/egress.ts';
import { loopbackSession } from '../support/browser-session.ts';

/** An IPv4 address of this machine that is not loopback: a target its browser must not reach. */
function ownAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

const own = ownAddress();

/*
 * A 302 from an allowed loopback page to a reserved address was followed, and so were a redirect
 * to 0.0.0.0 and a subresource's 307: the target was hit and screenshotted. The development
 * Chromium now reaches the network only through Mesh's egress proxy, which checks every
 * connection where it opens. The target listens on every address of this machine and counts the
 * connections it is sent: none may arrive.
 */
describe.skipIf(own === undefined)('every hop of a local browser passes the egress fence', () => {
  const backend = localBrowserBackend();
  let target: Server;
  let targetPort: number;
  let connections = 0;
  let site: Server;
  let siteUrl: string;
  let session: DrivenSession;

  beforeAll(async () => {
    target = createServer((_req, res) => res.end('TARGET REACHED'));
    target.on('connection', () => connections++);
    await new Promise<void>((resolve) => target.listen(0, '0.0.0.0', resolve));
    targetPort = (target.address() as AddressInfo).port;
    const away = (host: string, path = '/') => `http://${host}:${targetPort}${path}`;
    site = createServer((req, res) => {
      const redirect = (status: number, location: string) =>
        res.writeHead(status, { location }).end();
      switch (req.url) {
        case '/main':
          return redirect(302, away(own ?? ''));
        case '/zero':
          return redirect(302, away('0.0.0.0'));
        case '/pixel':
          return redirect(307, away(own ?? '', '/pixel.png'));
        case '/page':
          return res
            .writeHead(200, { 'content-type': 'text/html' })
            .end(
              '<!doctype html><title>Page</title><p>Hello</p>' +
                `<img src="/pixel"><script>fetch('${away(own ?? '', '/api')}').catch(() => {})</script>`,
            );
        default:
          return res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    // A development grant that allows loopback, as the browser tests' sites need.
    const rented = await backend.provision(loopbackSession());
    session = await driveOverCdp(rented.cdp, {
      guard: browserEgressGuard({ allowLoopback: true }),
    });
  }, 60_000);

  afterAll(async () => {
    await session?.disconnect();
    await backend.close();
    await new Promise((resolve) => site?.close(resolve));
    await new Promise((resolve) => target?.close(resolve));
  });

  it('the target is reachable from this process, so a silent one would prove nothing', async () => {
    const answer = await fetch(`http://${own ?? ''}:${targetPort}/`).then((r) => r.text());
    expect(answer).toBe('TARGET REACHED');
    expect(connections).toBe(1);
    connections = 0;
  });

  it('refuses a main-frame 302 from an allowed loopback page to an address of this machine', async () => {
    const landed = await session.navigate(`${siteUrl}/main`).then(
      (page) => `landed ${page.status} ${page.url}`,
      (error: unknown) => `refused ${(error as Error).message}`,
    );
    const text = (await session.read('text')).markdown;
    expect(text).not.toContain('TARGET REACHED');
    expect(connections, landed).toBe(0);
  });

  it('refuses a redirect to 0.0.0.0', async () => {
    await session.navigate(`${siteUrl}/zero`).catch(() => undefined);
    expect((await session.read('text')).markdown).not.toContain('TARGET REACHED');
    expect(connections).toBe(0);
  });

  it('refuses a subresource 307 and a script fetch to it; the page itself loads', async () => {
    const page = await session.navigate(`${siteUrl}/page`);
    expect(page).toMatchObject({ status: 200, title: 'Page' });
    // The page's load event waits for its image, so its request has been made (and refused).
    await session.read('text');
    expect(connections).toBe(0);
  });
});
