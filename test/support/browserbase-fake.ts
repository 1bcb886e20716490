import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { localBrowserBackend } from '../../src/browser/backends/local.ts';
import { proxyToDevtools, refuseUpgrade } from './cdp-proxy.ts';
import { loopbackSession } from './browser-session.ts';

/**
 * Browserbase's session API on loopback, as its documentation and SDK describe it: `POST
 * /v1/sessions` (the `X-BB-API-Key` header) answers a session whose `connectUrl` carries a
 * signing key; a WebSocket to it with that key reaches a real local Chromium over CDP;
 * `GET /v1/sessions/{id}/debug` gives the live-view URLs; `POST /v1/sessions/{id}` with
 * `REQUEST_RELEASE` ends it; `GET /v1/sessions/{id}/recording` gives its rrweb events.
 */
export interface BrowserbaseFake {
  readonly baseUrl: string;
  /** Sessions created, with their state and what was asked of them. */
  readonly sessions: ReadonlyMap<string, FakeSession>;
  /** Every request's method and path, in order. */
  readonly requests: readonly string[];
  close(): Promise<void>;
}

export interface FakeSession {
  readonly id: string;
  readonly signingKey: string;
  status: 'RUNNING' | 'COMPLETED';
  released: boolean;
  readonly metadata: Record<string, unknown>;
  readonly externalId: string;
  readonly devtoolsUrl: string;
}

export async function startBrowserbaseFake(options: { apiKey: string }): Promise<BrowserbaseFake> {
  const chromium = localBrowserBackend();
  const sessions = new Map<string, FakeSession>();
  const requests: string[] = [];
  const server = createServer((req, res) => {
    void handle(req, res).catch(() => send(res, 500, { error: 'fake failed' }));
  });
  let baseUrl = '';

  function send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
    let text = '';
    for await (const chunk of req) text += (chunk as Buffer).toString('utf8');
    return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  }

  function view(s: FakeSession) {
    const now = new Date().toISOString();
    return {
      id: s.id,
      createdAt: now,
      updatedAt: now,
      startedAt: now,
      expiresAt: now,
      keepAlive: false,
      projectId: 'proj-fake',
      proxyBytes: 0,
      region: 'us-west-2',
      status: s.status,
      userMetadata: s.metadata,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    requests.push(`${req.method} ${path}`);
    if (req.headers['x-bb-api-key'] !== options.apiKey) {
      send(res, 401, { statusCode: 401, error: 'Unauthorized', message: 'Invalid API key' });
      return;
    }
    if (req.method === 'POST' && path === '/v1/sessions') {
      const input = await body(req);
      const id = randomUUID();
      const rented = await chromium.provision(loopbackSession({ id }));
      const session: FakeSession = {
        id,
        signingKey: randomUUID(),
        status: 'RUNNING',
        released: false,
        metadata: (input['userMetadata'] as Record<string, unknown> | undefined) ?? {},
        externalId: rented.externalId,
        devtoolsUrl: rented.cdp.url,
      };
      sessions.set(id, session);
      const connectUrl = `${baseUrl.replace(/^http/, 'ws')}/connect?signingKey=${session.signingKey}&sessionId=${id}`;
      send(res, 201, {
        ...view(session),
        connectUrl,
        seleniumRemoteUrl: `${baseUrl}/webdriver`,
        signingKey: session.signingKey,
      });
      return;
    }
    const match = /^\/v1\/sessions\/([^/]+)(\/debug|\/recording)?$/.exec(path);
    const session = match ? sessions.get(match[1] ?? '') : undefined;
    if (!match || !session) {
      send(res, 404, { statusCode: 404, error: 'Not Found', message: 'Session not found' });
      return;
    }
    if (req.method === 'GET' && match[2] === '/debug') {
      const live = `${baseUrl}/devtools/inspector.html?sessionId=${session.id}`;
      send(res, 200, {
        debuggerFullscreenUrl: `${live}&fullscreen=1`,
        debuggerUrl: live,
        wsUrl: `${baseUrl.replace(/^http/, 'ws')}/connect?sessionId=${session.id}`,
        pages: [],
      });
      return;
    }
    if (req.method === 'GET' && match[2] === '/recording') {
      send(res, 200, [
        { type: 4, timestamp: Date.now(), data: { href: 'about:blank', width: 1280, height: 900 } },
        { type: 2, timestamp: Date.now(), data: { node: { type: 0, childNodes: [] } } },
        // What rrweb records when a person types into a field (here, a password).
        {
          type: 3,
          timestamp: Date.now(),
          data: { source: 5, id: 12, text: 'hunter2-typed', isChecked: false },
        },
      ]);
      return;
    }
    if (req.method === 'POST' && match[2] === undefined) {
      const input = await body(req);
      if (input['status'] !== 'REQUEST_RELEASE') {
        send(res, 400, {
          statusCode: 400,
          error: 'Bad Request',
          message: 'status must be REQUEST_RELEASE',
        });
        return;
      }
      session.released = true;
      session.status = 'COMPLETED';
      await chromium.release(session.externalId);
      send(res, 200, view(session));
      return;
    }
    if (req.method === 'GET' && match[2] === undefined) {
      // A running session's details carry its connect URL again (how a client reconnects).
      send(res, 200, {
        ...view(session),
        ...(session.released
          ? {}
          : {
              connectUrl: `${baseUrl.replace(/^http/, 'ws')}/connect?signingKey=${session.signingKey}&sessionId=${session.id}`,
            }),
      });
      return;
    }
    send(res, 405, { statusCode: 405, error: 'Method Not Allowed' });
  }

  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://fake');
    const session = sessions.get(url.searchParams.get('sessionId') ?? '');
    if (
      url.pathname !== '/connect' ||
      !session ||
      url.searchParams.get('signingKey') !== session.signingKey ||
      session.released
    ) {
      refuseUpgrade(socket, 401, 'Unauthorized');
      return;
    }
    proxyToDevtools(req, socket, head, session.devtoolsUrl);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    baseUrl,
    sessions,
    requests,
    async close() {
      await chromium.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
