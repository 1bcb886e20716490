import { timingSafeEqual } from 'node:crypto';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import { getCookie, setCookie } from 'hono/cookie';
import { secureHeaders } from 'hono/secure-headers';
import { finishOAuthConnection } from '../app/mcp/connections.ts';
import type { Mesh } from '../app/mesh.ts';
import {
  closeOperatorSession,
  findSession,
  openOperatorSession,
  SESSION_TTL_MS,
  verifyOperatorToken,
} from '../app/operators/operator-auth.ts';
import type { FailureLimiter } from './failure-limit.ts';
import { HttpError } from './http-error.ts';
import { errorResponse, isExpected, readForm } from './http.ts';
import { UUID_SOURCE } from './ids.ts';
import { refuseUnstorablePairs } from './input-text.ts';
import { RouteTable, routeNotFound } from './router.ts';
import type { StreamSlots } from './run-events.ts';
import { htmlResponse, originOf, type ServerEnv } from './server-env.ts';
import { loginPage } from './ui/login-pages.ts';
import { uiRoutes } from './ui/routes.ts';
import type { Flash } from './ui/ui-route.ts';

const SESSION_COOKIE = 'mesh_session';
const FLASH_COOKIE = 'mesh_flash';
const LOWER_UUID = new RegExp(`^${UUID_SOURCE}$`);

/** The pages' policy: our own stylesheet and script only, forms post only to us, no framing. */
const pagePolicy = secureHeaders({
  contentSecurityPolicy: {
    defaultSrc: ["'none'"],
    styleSrc: ["'self'"],
    scriptSrc: ["'self'"],
    connectSrc: ["'self'"],
    imgSrc: ["'self'"],
    mediaSrc: ["'self'"],
    formAction: ["'self'"],
    frameAncestors: ["'none'"],
    baseUri: ["'none'"],
  },
  crossOriginResourcePolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  referrerPolicy: false,
  strictTransportSecurity: false,
  xContentTypeOptions: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xFrameOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Sets one of the UI's cookies: never readable by scripts, never sent from another site, and
 * only over https when the request came over https (directly or through a trusted proxy).
 */
function putCookie(
  c: Context<ServerEnv>,
  name: string,
  value: string,
  maxAgeSeconds: number,
): void {
  setCookie(c, name, value, {
    path: '/',
    httpOnly: true,
    sameSite: 'Strict',
    maxAge: maxAgeSeconds,
    ...(c.get('client').https ? { secure: true } : {}),
  });
}

function putFlash(c: Context<ServerEnv>, flash: Flash): void {
  putCookie(c, FLASH_COOKIE, Buffer.from(JSON.stringify(flash)).toString('base64url'), 60);
}

function takeFlash(raw: string | undefined): Flash | undefined {
  if (!raw) return undefined;
  try {
    const value = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<Flash>;
    if ((value.kind === 'ok' || value.kind === 'error') && typeof value.text === 'string') {
      const kept =
        typeof value.kept === 'object' && value.kept !== null
          ? Object.fromEntries(
              Object.entries(value.kept).filter(
                (e): e is [string, string] => typeof e[1] === 'string',
              ),
            )
          : undefined;
      return {
        kind: value.kind,
        text: value.text.slice(0, 500),
        ...(kept ? { kept } : {}),
        ...(typeof value.field === 'string' ? { field: value.field.slice(0, 100) } : {}),
      };
    }
  } catch {
    // A garbled notice is dropped.
  }
  return undefined;
}

/**
 * A form post must come from this origin: browsers send Origin on every cross-site POST, and
 * Sec-Fetch-Site on every request. Hono's csrf middleware refuses a post that carries neither
 * (a script or a test client); this check lets it through to the session and CSRF-token checks,
 * which hold it anyway, and refuses a foreign Origin even when Sec-Fetch-Site claims the site.
 */
const sameOriginPosts: MiddlewareHandler<ServerEnv> = async (c, next) => {
  if (c.req.method === 'POST') {
    const origin = c.req.header('origin');
    if (c.req.header('sec-fetch-site') === 'cross-site')
      throw new HttpError('csrf_refused', 'cross-site form posts are refused');
    const host = c.req.header('host') ?? '';
    if (origin !== undefined && origin !== `http://${host}` && origin !== `https://${host}`)
      throw new HttpError('csrf_refused', 'cross-origin form posts are refused');
  }
  await next();
};

/**
 * Every page but the login needs a session; every form post also needs the session's CSRF token.
 * What passes is handed on as the `page` variable.
 */
function signedIn(mesh: Mesh): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    const sessionId = getCookie(c, SESSION_COOKIE);
    const session = sessionId ? await findSession(mesh.db, sessionId) : undefined;
    if (!sessionId || !session) {
      if (c.req.method === 'GET') return c.redirect('/login', 303);
      throw new HttpError('unauthorized', 'log in first');
    }
    let form = new URLSearchParams();
    if (c.req.method === 'POST') {
      form = await readForm(c);
      if (!sameText(form.get('csrf') ?? '', session.csrfToken))
        throw new HttpError(
          'csrf_refused',
          'the form is stale or did not come from this UI; reload the page',
        );
    }
    const flash = c.req.method === 'GET' ? takeFlash(getCookie(c, FLASH_COOKIE)) : undefined;
    c.set('page', {
      sessionId,
      form,
      flash,
      session: {
        csrf: session.csrfToken,
        flash,
        actor: `operator:${session.tokenLabel}:${session.tokenId.slice(0, 8)}`,
        tokenId: session.tokenId,
        origin: originOf(c),
      },
    });
    await next();
  };
}

/**
 * The authorization server sends the operator's browser back here from another site, so no
 * SameSite cookie comes with it: the pending state of the binding is what authenticates it.
 */
function oauthCallback(mesh: Mesh, logFailure: (error: unknown) => void) {
  return async (c: Context<ServerEnv>, next: () => Promise<void>) => {
    const agentId = c.req.param('agent') ?? '';
    const providerId = c.req.param('provider') ?? '';
    if (!LOWER_UUID.test(agentId) || !LOWER_UUID.test(providerId)) {
      await next();
      return;
    }
    const q = new URL(c.req.url).searchParams;
    refuseUnstorablePairs(q, 'query');
    try {
      const done = await finishOAuthConnection(mesh, agentId, providerId, {
        code: q.get('code') ?? '',
        state: q.get('state') ?? '',
        ...(q.get('iss') ? { iss: q.get('iss') ?? '' } : {}),
      });
      putFlash(c, {
        kind: 'ok',
        text: `Connected ${done.agent.name} to ${done.provider.slug} with OAuth: ${done.check.added.length} tools.`,
      });
      return c.redirect(`/agents/${encodeURIComponent(done.agent.name)}/mcp`, 303);
    } catch (error) {
      if (!isExpected(error)) logFailure(error);
      const message =
        q.get('error') !== null
          ? 'the authorization server did not grant access'
          : errorResponse(error).body.error.message;
      putFlash(c, { kind: 'error', text: `OAuth connection failed: ${message}` });
      return c.redirect('/agents', 303);
    }
  };
}

/**
 * Serves the web UI: a session cookie opened by presenting a token; every form post carries the
 * session's CSRF token and must come from this origin. Mounted after the API, so none of this
 * runs for /api.
 */
export function mountUi(
  app: Hono<ServerEnv>,
  mesh: Mesh,
  logFailure: (error: unknown) => void,
  failures: FailureLimiter,
  streams: StreamSlots,
): void {
  app.use('*', pagePolicy);
  app.use('*', sameOriginPosts);
  app.get('/mcp/oauth/callback/:agent/:provider', oauthCallback(mesh, logFailure));

  app.get('/login', (c) => htmlResponse(c, 200, loginPage()));
  app.post('/login', async (c) => {
    const address = c.get('client').address;
    try {
      failures.check(address);
    } catch (error) {
      const { status, body, headers } = errorResponse(error);
      return htmlResponse(c, status, loginPage(body.error.message), headers);
    }
    const form = await readForm(c);
    const token = await verifyOperatorToken(mesh.db, (form.get('token') ?? '').trim());
    if (!token) {
      failures.fail(address);
      return htmlResponse(c, 401, loginPage('That is not a valid operator token.'));
    }
    const opened = await openOperatorSession(mesh.db, token.id);
    putCookie(c, SESSION_COOKIE, opened.sessionId, SESSION_TTL_MS / 1000);
    return c.redirect('/agents', 303);
  });
  app.all('/login', () => {
    throw new HttpError('method_not_allowed', 'use GET or POST');
  });

  app.use('*', signedIn(mesh));
  app.post('/logout', async (c) => {
    await closeOperatorSession(mesh.db, c.get('page').sessionId);
    putCookie(c, SESSION_COOKIE, '', 0);
    return c.redirect('/login', 303);
  });

  const table = new RouteTable(uiRoutes);
  table.mount(app, async (route, params, c) => {
    const page = c.get('page');
    const result = await route.handle({
      mesh,
      session: page.session,
      params,
      query: new URL(c.req.url).searchParams,
      form: page.form,
      streams,
      lastEventId: c.req.header('last-event-id'),
    });
    if ('response' in result) return result.response;
    if ('redirect' in result) {
      if (result.flash) putFlash(c, result.flash);
      else if (page.flash) putCookie(c, FLASH_COOKIE, '', 0);
      return c.redirect(result.redirect, 303);
    }
    if (page.flash) putCookie(c, FLASH_COOKIE, '', 0);
    return htmlResponse(c, result.status ?? 200, result.page);
  });
  app.all('*', () => {
    throw routeNotFound();
  });
}
