import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { timingSafeEqual } from 'node:crypto';
import type { Mesh } from '../app/mesh.ts';
import {
  closeOperatorSession,
  findSession,
  openOperatorSession,
  SESSION_TTL_MS,
  verifyOperatorToken,
} from '../app/operator-auth.ts';
import { isMeshError } from '../tool/errors.ts';
import { finishOAuthConnection } from '../app/mcp.ts';
import { apiRoutes, type ApiContext } from './api.ts';
import {
  errorResponse,
  HttpError,
  isExpected,
  parseCookies,
  readForm,
  readJson,
  redirect,
  sendAsset,
  sendHtml,
  sendJson,
} from './http.ts';
import { UUID_SOURCE } from './ids.ts';
import { Router, type ApiRoute } from './router.ts';
import { errorPage, loginPage } from './ui/pages.ts';
import { uiRoutes, type Flash, type UiRoute } from './ui/routes.ts';
import { STYLESHEET } from './ui/style.ts';

export interface ServerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Where request lines and failures go; never request bodies. */
  readonly log?: (line: string) => void;
  readonly version?: string;
}

/** A listening Mesh server. */
export interface MeshServer {
  /** `http://host:port/` as a browser reaches it. */
  readonly url: string;
  close(): Promise<void>;
}

const SESSION_COOKIE = 'mesh_session';
const OAUTH_CALLBACK = new RegExp(`^/mcp/oauth/callback/(${UUID_SOURCE})/(${UUID_SOURCE})$`);
/** A small mark for the browser tab, so its request is not answered with a login redirect. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3a5bd9"/><path d="M3 12V4l5 5 5-5v8" stroke="#fff" stroke-width="2" fill="none"/></svg>';

/** Public, static files: the stylesheet and the tab icon. */
const ASSETS = new Map([
  ['/assets/mesh.css', { type: 'text/css; charset=utf-8', body: STYLESHEET }],
  ['/favicon.ico', { type: 'image/svg+xml', body: FAVICON }],
]);
const FLASH_COOKIE = 'mesh_flash';

function cookie(name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeSeconds}`;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function bearer(req: IncomingMessage): string | undefined {
  const header = req.headers.authorization;
  if (!header) return undefined;
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

function encodeFlash(flash: Flash): string {
  return Buffer.from(JSON.stringify(flash)).toString('base64url');
}

function decodeFlash(raw: string | undefined): Flash | undefined {
  if (!raw) return undefined;
  try {
    const value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<Flash>;
    if ((value.kind === 'ok' || value.kind === 'error') && typeof value.text === 'string')
      return { kind: value.kind, text: value.text.slice(0, 500) };
  } catch {
    // A garbled notice is dropped.
  }
  return undefined;
}

/**
 * The HTTP face of Mesh: the JSON API under /api (bearer operator tokens only, so no cookie ever
 * authorises an API call and CSRF cannot reach it) and the server-rendered web UI (a session
 * cookie opened by presenting a token; every form post carries the session's CSRF token and
 * must come from this origin).
 */
export async function startServer(mesh: Mesh, options: ServerOptions): Promise<MeshServer> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const version = options.version ?? '0.0.0';
  const api = new Router<ApiRoute<ApiContext>>(apiRoutes);
  const ui = new Router<UiRoute>(uiRoutes);

  async function serveApi(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const presented = bearer(req);
    const operator = presented ? await verifyOperatorToken(mesh.db, presented) : undefined;
    if (!operator) {
      throw new HttpError(
        401,
        'unauthorized',
        presented
          ? 'the operator token is not valid'
          : 'an operator token is required: Authorization: Bearer <token>',
        { 'www-authenticate': 'Bearer realm="mesh"', connection: 'close' },
      );
    }
    const { route, params } = api.match(req.method ?? 'GET', url.pathname);
    let body: unknown;
    if (route.body) {
      body = await readJson(req);
      api.validate(route, body);
    }
    const result = await route.handle({
      params,
      query: url.searchParams,
      body,
      context: { mesh, operator, version, origin: originOf(req) },
    });
    sendJson(res, route.status ?? 200, result);
  }

  async function serveUi(req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
    const method = req.method ?? 'GET';
    const cookies = parseCookies(req.headers.cookie);
    const sessionId = cookies.get(SESSION_COOKIE);
    if (method === 'POST') checkOrigin(req);

    // The authorization server sends the operator's browser back here from another site, so no
    // SameSite cookie comes with it: the pending state of the binding is what authenticates it.
    const callback = OAUTH_CALLBACK.exec(url.pathname);
    if (callback && method === 'GET') {
      const [, agentId = '', providerId = ''] = callback;
      const q = url.searchParams;
      try {
        const done = await finishOAuthConnection(mesh, agentId, providerId, {
          code: q.get('code') ?? '',
          state: q.get('state') ?? '',
          ...(q.get('iss') ? { iss: q.get('iss') ?? '' } : {}),
        });
        return redirect(res, `/agents/${encodeURIComponent(done.agent.name)}/mcp`, {
          'set-cookie': cookie(
            FLASH_COOKIE,
            encodeFlash({
              kind: 'ok',
              text: `Connected ${done.agent.name} to ${done.provider.slug} with OAuth: ${done.check.added.length} tools.`,
            }),
            60,
          ),
        });
      } catch (error) {
        if (!isExpected(error)) logFailure(error);
        const message =
          q.get('error') !== null
            ? 'the authorization server did not grant access'
            : errorResponse(error).body.error.message;
        return redirect(res, '/agents', {
          'set-cookie': cookie(
            FLASH_COOKIE,
            encodeFlash({ kind: 'error', text: `OAuth connection failed: ${message}` }),
            60,
          ),
        });
      }
    }

    if (url.pathname === '/login') {
      if (method === 'GET') return sendHtml(res, 200, loginPage());
      if (method !== 'POST') throw new HttpError(405, 'method_not_allowed', 'use GET or POST');
      const form = await readForm(req);
      const token = await verifyOperatorToken(mesh.db, (form.get('token') ?? '').trim());
      if (!token) return sendHtml(res, 401, loginPage('That is not a valid operator token.'));
      const opened = await openOperatorSession(mesh.db, token.id);
      return redirect(res, '/agents', {
        'set-cookie': cookie(SESSION_COOKIE, opened.sessionId, SESSION_TTL_MS / 1000),
      });
    }

    const session = sessionId ? await findSession(mesh.db, sessionId) : undefined;
    if (!session) {
      if (method === 'GET') return redirect(res, '/login');
      throw new HttpError(401, 'unauthorized', 'log in first');
    }
    let form = new URLSearchParams();
    if (method === 'POST') {
      form = await readForm(req);
      if (!sameText(form.get('csrf') ?? '', session.csrfToken))
        throw new HttpError(
          403,
          'csrf_refused',
          'the form is stale or did not come from this UI; reload the page',
        );
    }
    if (url.pathname === '/logout' && method === 'POST') {
      await closeOperatorSession(mesh.db, sessionId ?? '');
      return redirect(res, '/login', { 'set-cookie': cookie(SESSION_COOKIE, '', 0) });
    }

    const flash = method === 'GET' ? decodeFlash(cookies.get(FLASH_COOKIE)) : undefined;
    const pageSession = {
      csrf: session.csrfToken,
      flash,
      actor: `operator:${session.tokenLabel}:${session.tokenId.slice(0, 8)}`,
      origin: originOf(req),
    };
    try {
      const { route, params } = ui.match(method, url.pathname);
      const result = await route.handle({
        mesh,
        session: pageSession,
        params,
        query: url.searchParams,
        form,
      });
      const clearFlash: Record<string, string> = flash
        ? { 'set-cookie': cookie(FLASH_COOKIE, '', 0) }
        : {};
      if ('redirect' in result) {
        return redirect(
          res,
          result.redirect,
          result.flash
            ? { 'set-cookie': cookie(FLASH_COOKIE, encodeFlash(result.flash), 60) }
            : clearFlash,
        );
      }
      return sendHtml(res, result.status ?? 200, result.page, clearFlash);
    } catch (error) {
      const { status, body } = errorResponse(error);
      if (!isExpected(error)) logFailure(error);
      return sendHtml(res, status, errorPage(pageSession, status, body.error.message));
    }
  }

  /** This server's origin as the request reached it (for URLs other sites send browsers back to). */
  function originOf(req: IncomingMessage): string {
    const proto = req.headers['x-forwarded-proto'] === 'https' ? 'https' : 'http';
    return `${proto}://${req.headers.host ?? 'localhost'}`;
  }

  /** A form post must come from this origin: browsers send Origin on every cross-site POST. */
  function checkOrigin(req: IncomingMessage): void {
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    if (site === 'cross-site')
      throw new HttpError(403, 'csrf_refused', 'cross-site form posts are refused');
    if (origin === undefined) return;
    const host = req.headers.host ?? '';
    if (origin !== `http://${host}` && origin !== `https://${host}`)
      throw new HttpError(403, 'csrf_refused', 'cross-origin form posts are refused');
  }

  function logFailure(error: unknown): void {
    const what = isMeshError(error)
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? `${error.name}: ${error.message}`
        : 'a non-error was thrown';
    log(`error ${what}`);
  }

  const server = createServer((req, res) => {
    const started = performance.now();
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://mesh.invalid');
    } catch {
      sendJson(res, 400, {
        error: { code: 'bad_request', message: 'the request target is not a path' },
      });
      return;
    }
    res.on('finish', () => {
      log(
        `${req.method ?? '?'} ${url.pathname} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms`,
      );
    });
    const isApi = url.pathname === '/api' || url.pathname.startsWith('/api/');
    const asset = req.method === 'GET' ? ASSETS.get(url.pathname) : undefined;
    const work = isApi
      ? serveApi(req, res, url)
      : asset
        ? Promise.resolve(sendAsset(res, asset.type, asset.body))
        : serveUi(req, res, url);
    work.catch((error: unknown) => {
      if (!isExpected(error)) logFailure(error);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const { status, body, headers } = errorResponse(error);
      if (isApi) sendJson(res, status, body, headers);
      else sendHtml(res, status, errorPage(undefined, status, body.error.message), headers);
    });
  });
  server.requestTimeout = 120_000;
  server.headersTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
