import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localBrowserBackend } from '../../src/browser/backends/local.ts';
import { proxyToDevtools, refuseUpgrade } from './cdp-proxy.ts';
import { loopbackSession } from './browser-session.ts';

/**
 * Steel's and Cloudflare Browser Run's session APIs on loopback, as their documentation gives
 * them, each handing out a real local Chromium over CDP behind the vendor's own auth:
 * - Steel: `POST /v1/sessions` (`steel-api-key` header) answers `{id, websocketUrl, debugUrl}`;
 *   the WebSocket takes `?apiKey=&sessionId=`; `POST /v1/sessions/{id}/release` ends it.
 * - Cloudflare: `POST /client/v4/accounts/{account}/browser-rendering/devtools/browser?keep_alive=`
 *   (bearer token) answers `{sessionId, webSocketDebuggerUrl}`; the WebSocket takes the same
 *   bearer header; `GET …/devtools/session/{id}` gives `devtoolsFrontendUrl`; `DELETE
 *   …/devtools/browser/{id}` closes it.
 */
export interface VendorFake {
  readonly baseUrl: string;
  readonly sessions: ReadonlyMap<string, { released: boolean; readonly devtoolsUrl: string }>;
  /** Requests refused for their auth. */
  readonly refused: number;
  close(): Promise<void>;
}

type Kind = 'steel' | 'cloudflare';

export async function startBrowserVendorFake(
  kind: Kind,
  options: { apiKey: string; accountId?: string },
): Promise<VendorFake> {
  const chromium = localBrowserBackend();
  const sessions = new Map<
    string,
    { released: boolean; externalId: string; devtoolsUrl: string }
  >();
  let refused = 0;
  let baseUrl = '';
  const account = options.accountId ?? 'acct-fake';
  const cfBase = `/client/v4/accounts/${account}/browser-rendering/devtools`;

  const authorized = (req: IncomingMessage) =>
    kind === 'steel'
      ? req.headers['steel-api-key'] === options.apiKey
      : req.headers.authorization === `Bearer ${options.apiKey}`;

  function send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  async function create(): Promise<{ id: string; devtoolsUrl: string }> {
    const id = randomUUID();
    const rented = await chromium.provision(loopbackSession({ id }));
    sessions.set(id, {
      released: false,
      externalId: rented.externalId,
      devtoolsUrl: rented.cdp.url,
    });
    return { id, devtoolsUrl: rented.cdp.url };
  }

  async function release(id: string): Promise<boolean> {
    const session = sessions.get(id);
    if (!session) return false;
    session.released = true;
    await chromium.release(session.externalId);
    return true;
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      for await (const _ of req) void _;
      if (!authorized(req)) {
        refused++;
        send(
          res,
          401,
          kind === 'steel'
            ? { message: 'Unauthorized' }
            : { success: false, errors: [{ code: 10000, message: 'Authentication error' }] },
        );
        return;
      }
      const ws = baseUrl.replace(/^http/, 'ws');
      if (kind === 'steel') {
        if (req.method === 'POST' && url.pathname === '/v1/sessions') {
          const { id } = await create();
          send(res, 200, {
            id,
            status: 'live',
            websocketUrl: `${ws}/`,
            debugUrl: `${baseUrl}/v1/sessions/debug?sessionId=${id}`,
            sessionViewerUrl: `${baseUrl}/sessions/${id}`,
          });
          return;
        }
        const got = /^\/v1\/sessions\/([^/]+)$/.exec(url.pathname);
        const known = got ? sessions.get(got[1] ?? '') : undefined;
        if (req.method === 'GET' && got && known) {
          send(res, 200, {
            id: got[1],
            status: known.released ? 'released' : 'live',
            websocketUrl: `${ws}/`,
          });
          return;
        }
        const m = /^\/v1\/sessions\/([^/]+)\/release$/.exec(url.pathname);
        if (req.method === 'POST' && m) {
          const ok = await release(m[1] ?? '');
          send(
            res,
            ok ? 200 : 404,
            ok ? { id: m[1], status: 'released' } : { message: 'Not found' },
          );
          return;
        }
      } else {
        if (req.method === 'POST' && url.pathname === `${cfBase}/browser`) {
          const { id } = await create();
          send(res, 200, { sessionId: id, webSocketDebuggerUrl: `${ws}${cfBase}/browser/${id}` });
          return;
        }
        const detail = new RegExp(`^${cfBase}/session/([^/]+)$`).exec(url.pathname);
        if (req.method === 'GET' && detail && sessions.has(detail[1] ?? '')) {
          const id = detail[1] ?? '';
          send(res, 200, {
            sessionId: id,
            devtoolsFrontendUrl: `https://live.browser.run/ui/view?mode=tab&wss=${encodeURIComponent(`${ws}${cfBase}/browser/${id}`)}`,
          });
          return;
        }
        const close = new RegExp(`^${cfBase}/browser/([^/]+)$`).exec(url.pathname);
        if (req.method === 'DELETE' && close) {
          const ok = await release(close[1] ?? '');
          send(res, ok ? 200 : 404, ok ? { status: 'closed' } : { success: false });
          return;
        }
      }
      send(res, 404, { message: 'Not found' });
    })().catch(() => send(res, 500, { message: 'fake failed' }));
  });

  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    let id: string | undefined;
    if (kind === 'steel') {
      id =
        url.searchParams.get('apiKey') === options.apiKey
          ? (url.searchParams.get('sessionId') ?? undefined)
          : undefined;
    } else if (req.headers.authorization === `Bearer ${options.apiKey}`) {
      id = new RegExp(`^${cfBase}/browser/([^/]+)$`).exec(url.pathname)?.[1];
    }
    const session = id === undefined ? undefined : sessions.get(id);
    if (!session || session.released) {
      refused++;
      refuseUpgrade(socket, 401, 'Unauthorized');
      return;
    }
    proxyToDevtools(req, socket, head, session.devtoolsUrl);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const root = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  baseUrl = root;
  return {
    baseUrl: kind === 'steel' ? root : `${root}/client/v4`,
    sessions,
    get refused() {
      return refused;
    },
    async close() {
      await chromium.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
