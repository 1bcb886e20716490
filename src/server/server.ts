import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRequestListener } from '@hono/node-server';
import { Hono, type MiddlewareHandler } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import type { Mesh } from '../app/mesh.ts';
import { isMeshError } from '../tool/errors.ts';
import { clientOrigin, NO_TRUSTED_PROXIES, type TrustedProxies } from './client-address.ts';
import {
  DEFAULT_FAILURE_LIMIT,
  FailureLimiter,
  type FailureLimitOptions,
} from './failure-limit.ts';
import { errorResponse, isExpected } from './http.ts';
import { StreamSlots } from './run-events.ts';
import { mountApi, type SocketPrincipal } from './serve-api.ts';
import { htmlResponse, jsonResponse, type ServerEnv } from './server-env.ts';
import { mountUi } from './serve-ui.ts';
import { errorPage } from './ui/login-pages.ts';
import { LIVE_SCRIPT } from './ui/live-script.ts';
import { STYLESHEET } from './ui/style.ts';

export interface ServerOptions {
  readonly host: string;
  /** 0 picks a free port. */
  readonly port: number;
  /** Where request lines and failures go; never request bodies. */
  readonly log?: (line: string) => void;
  readonly version?: string;
  /** Proxies whose `X-Forwarded-For` and `X-Forwarded-Proto` are believed (none unless given). */
  readonly trustedProxies?: TrustedProxies;
  /** Failed logins and API tokens allowed per client address (10 a minute unless given). */
  readonly failureLimit?: FailureLimitOptions;
}

/** A listening Mesh server. */
export interface MeshServer {
  /** `http://host:port/` as a browser reaches it. */
  readonly url: string;
  close(): Promise<void>;
}

/** A small mark for the browser tab, so its request is not answered with a login redirect. */
const FAVICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 16 16"><rect width="16" height="16" rx="3" fill="#3a5bd9"/><path d="M3 12V4l5 5 5-5v8" stroke="#fff" stroke-width="2" fill="none"/></svg>';

/** Public, static files: the stylesheet, the pages' script and the tab icon. */
const ASSETS = [
  { path: '/assets/mesh.css', type: 'text/css; charset=utf-8', body: STYLESHEET },
  { path: '/assets/live.js', type: 'text/javascript; charset=utf-8', body: LIVE_SCRIPT },
  { path: '/favicon.ico', type: 'image/svg+xml', body: FAVICON },
] as const;

/** Headers every response carries; the pages add their Content-Security-Policy. */
const everyResponse = secureHeaders({
  xContentTypeOptions: true,
  referrerPolicy: 'same-origin',
  xFrameOptions: 'DENY',
  crossOriginResourcePolicy: false,
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  strictTransportSecurity: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/** Nothing the server answers is cached, unless the answer says otherwise (the assets). */
const noStore: MiddlewareHandler = async (c, next) => {
  await next();
  if (!c.res.headers.has('cache-control')) c.res.headers.set('cache-control', 'no-store');
};

/**
 * Every request gets an id, so a failure's answer can point at its line in the log, and is told
 * where it came from (its client's address, whether over https) through the trusted proxies.
 */
function requestFacts(proxies: TrustedProxies): MiddlewareHandler<ServerEnv> {
  return async (c, next) => {
    c.set('requestId', randomUUID());
    c.set('client', clientOrigin(c, proxies));
    await next();
  };
}

/**
 * The HTTP face of Mesh as one Hono app: the JSON API under /api (bearer operator tokens only)
 * and the server-rendered web UI (a session cookie opened by presenting a token; every form post
 * carries the session's CSRF token and must come from this origin).
 */
export function meshApp(
  mesh: Mesh,
  options: {
    readonly log: (line: string) => void;
    readonly version: string;
    readonly trustedProxies?: TrustedProxies;
    readonly failureLimit?: FailureLimitOptions;
    /** Live event streams held open at once (64 unless given). */
    readonly maxStreams?: number;
    /** How many of them one operator token may hold. */
    readonly maxStreamsPerToken?: number;
    /**
     * The CLI's socket: every call is this principal's (the socket's owner-only file is the
     * credential), and only the API and the CLI's use cases are served, no pages.
     */
    readonly principal?: SocketPrincipal;
  },
): Hono<ServerEnv> {
  // Error texts carry what servers and providers said: a held secret never reaches a log line
  // or a response.
  const log = (line: string) => options.log(mesh.redactor.text(line));
  const failures = new FailureLimiter(mesh.clock, options.failureLimit ?? DEFAULT_FAILURE_LIMIT);
  const logFailure = (error: unknown, requestId?: string): void => {
    const what = isMeshError(error)
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? `${error.name}: ${error.message}`
        : 'a non-error was thrown';
    const cause = causeOf(error);
    log(
      `error${requestId ? ` request ${requestId}` : ''} ${what}${cause ? `; cause ${cause}` : ''}`,
    );
  };
  // Hono runs handlers in the order they are added and stops at the first answer: the assets,
  // then the API (which answers every /api path), then the UI.
  const app = new Hono<ServerEnv>({ strict: true });
  app.use('*', everyResponse, noStore, requestFacts(options.trustedProxies ?? NO_TRUSTED_PROXIES));
  for (const asset of options.principal ? [] : ASSETS) {
    app.get(asset.path, (c) =>
      c.body(asset.body, 200, {
        'content-type': asset.type,
        'cache-control': 'public, max-age=300',
      }),
    );
  }
  // One bound on live event streams for the whole server: API and UI streams share it.
  const streams = new StreamSlots(options.maxStreams, options.maxStreamsPerToken);
  mountApi(app, mesh, options.version, failures, streams, options.principal);
  if (!options.principal) mountUi(app, mesh, logFailure, failures, streams);
  app.onError((error, c) => {
    const id = c.get('requestId');
    const response = errorResponse(error, id);
    // Every answer the server could not give is logged with the id the caller was told, and why:
    // an expected refusal is not, but a Mesh error answered 5xx is Mesh's failure all the same.
    if (!isExpected(error) || response.status >= 500) logFailure(error, id);
    const { status, headers } = response;
    const body = {
      ...response.body,
      error: { ...response.body.error, message: mesh.redactor.text(response.body.error.message) },
    };
    const path = new URL(c.req.url).pathname;
    if (options.principal || path === '/api' || path.startsWith('/api/'))
      return jsonResponse(c, status, body, headers);
    // The signed-in page request, when the failure came after the session check.
    const page = c.get('page') as ServerEnv['Variables']['page'] | undefined;
    return htmlResponse(c, status, errorPage(page?.session, status, body.error.message), headers);
  });
  return app;
}

/**
 * What an error's cause was, as a line: a Mesh error's serialized cause (`data.cause`, as a failed
 * tool's), or the `cause` chain of an Error, at most three deep. Redacted by the log it goes to.
 */
function causeOf(error: unknown): string | undefined {
  const data = isMeshError(error) ? error.data?.['cause'] : undefined;
  if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
    const { code, message } = data as { code?: unknown; message?: unknown };
    if (typeof message === 'string')
      return `${typeof code === 'string' ? `${code}: ` : ''}${message}`;
  }
  const chain: string[] = [];
  let at = error instanceof Error ? error.cause : undefined;
  while (at instanceof Error && chain.length < 3) {
    chain.push(`${at.name}: ${at.message}`);
    at = at.cause;
  }
  return chain.length > 0 ? chain.join(' <- ') : undefined;
}

/**
 * A Node HTTP server answering with `app`; every request is logged (method, path, status, time),
 * never its body. Hono's lightweight Request and Response stay inside this listener: the
 * process's globals are left as Node made them.
 */
export function nodeServer(app: Hono<ServerEnv>, log: (line: string) => void): Server {
  const listener = getRequestListener(app.fetch, { overrideGlobalObjects: false });
  const server = createServer((req, res) => {
    const started = performance.now();
    let pathname: string;
    try {
      pathname = new URL(req.url ?? '/', 'http://mesh.invalid').pathname;
    } catch {
      res.writeHead(400, { 'content-type': 'application/json; charset=utf-8' });
      res.end(
        JSON.stringify({
          error: { code: 'bad_request', message: 'the request target is not a path' },
        }),
      );
      return;
    }
    res.on('finish', () => {
      log(
        `${req.method ?? '?'} ${pathname} ${res.statusCode} ${(performance.now() - started).toFixed(1)}ms`,
      );
    });
    void listener(req, res);
  });
  server.requestTimeout = 120_000;
  server.headersTimeout = 30_000;
  return server;
}

/** Serves {@link meshApp} on `host:port` until closed; every request is logged without its body. */
export async function startServer(mesh: Mesh, options: ServerOptions): Promise<MeshServer> {
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const app = meshApp(mesh, {
    log,
    version: options.version ?? '0.0.0',
    ...(options.trustedProxies ? { trustedProxies: options.trustedProxies } : {}),
    ...(options.failureLimit ? { failureLimit: options.failureLimit } : {}),
  });
  const server = nodeServer(app, log);
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
