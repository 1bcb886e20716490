import { catalog as firstParty } from '../../src/generated/catalog.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { ensureFirstOperatorToken } from '../../src/app/operators/operator-auth.ts';
import type { Catalog, HookBinding } from '../../src/manifest/catalog.ts';
import { loadCatalog, type LoadedCatalog } from '../../src/manifest/verify-catalog.ts';
import type { Db } from '../../src/store/db.ts';
import type { Clock } from '../../src/tool/clock.ts';
import type { ToolHandler } from '../../src/tool/definition.ts';
import type { TrustedProxies } from '../../src/server/client-address.ts';
import type { FailureLimitOptions } from '../../src/server/failure-limit.ts';
import { startServer, type MeshServer } from '../../src/server/server.ts';
import { trackerCatalog } from './catalog.ts';
import type { TestDatabase } from './db.ts';
import { scriptedAgent, testInstanceKey } from './turn.ts';

/**
 * The first-party packages plus the example tracker (which has secret, config and public fields),
 * with any tracker handler replaced by the given functions.
 */
export function serverCatalog(
  trackerHandlers: Readonly<Record<string, ToolHandler>> = {},
): Catalog {
  const tracker = trackerCatalog();
  return {
    packages: [...firstParty.packages, ...tracker.packages],
    handlers: [
      ...firstParty.handlers,
      ...tracker.handlers.map((h) => ({ ...h, fn: trackerHandlers[h.name] ?? h.fn })),
    ],
    hooks: [...firstParty.hooks, ...tracker.hooks],
  };
}

/** `catalog` with the example tracker's hook `name` bound to `fn` (a test counts or scripts it). */
export function withTrackerHook(catalog: Catalog, name: string, fn: HookBinding['fn']): Catalog {
  return {
    ...catalog,
    hooks: catalog.hooks.map((h) =>
      h.packageId === 'example.tracker' && h.name === name ? { ...h, fn } : h,
    ),
  };
}

/**
 * The default catalog, verified once per worker rather than once per server: verification
 * compiles every tool's schemas, and the result is frozen, with stub handlers that keep no state.
 */
let defaultCatalog: LoadedCatalog | undefined;

/** An HTTP exchange as the test client saw it. */
export interface Exchange {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: unknown;
}

/** A Mesh served over loopback, with everything it said recorded for leak checks. */
export interface TestServer {
  readonly mesh: Mesh;
  readonly url: string;
  /** The operator token created on first start. */
  readonly token: string;
  /** Every line the server logged. */
  readonly logs: string[];
  /** Every response body the test client received. */
  readonly bodies: string[];
  /** Calls the JSON API with the operator token (or the one given; null sends none). */
  api(
    method: string,
    path: string,
    body?: unknown,
    options?: { token?: string | null; headers?: Record<string, string>; raw?: string },
  ): Promise<Exchange>;
  close(): Promise<void>;
}

/**
 * Failed sign-ins a test server allows: tests that try every route with bad tokens would hit the
 * production limit; the limit's own test passes that one.
 */
const TEST_FAILURE_LIMIT: FailureLimitOptions = { failures: 100_000, perMs: 60_000 };

export async function startTestServer(
  db: Db,
  options: {
    catalog?: Catalog;
    failureLimit?: FailureLimitOptions;
    trustedProxies?: TrustedProxies;
    clock?: Clock;
  } = {},
): Promise<TestServer> {
  const mesh = assembleMesh(db, testInstanceKey(), {
    catalog: options.catalog
      ? loadCatalog(options.catalog)
      : (defaultCatalog ??= loadCatalog(serverCatalog())),
    modelRetry: { baseDelayMs: 1, maxDelayMs: 5 },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const first = await ensureFirstOperatorToken(db);
  if (!first) throw new Error('the test database already had an operator token');
  const logs: string[] = [];
  const bodies: string[] = [];
  const server: MeshServer = await startServer(mesh, {
    host: '127.0.0.1',
    port: 0,
    log: (line) => logs.push(line),
    version: 'test',
    failureLimit: options.failureLimit ?? TEST_FAILURE_LIMIT,
    ...(options.trustedProxies ? { trustedProxies: options.trustedProxies } : {}),
  });
  const base = server.url.replace(/\/$/, '');
  return {
    mesh,
    url: server.url,
    token: first.token,
    logs,
    bodies,
    async api(method, path, body, opts = {}) {
      const token = opts.token === undefined ? first.token : opts.token;
      const headers: Record<string, string> = { ...opts.headers };
      if (token !== null) headers['authorization'] = `Bearer ${token}`;
      let payload: string | undefined = opts.raw;
      if (body !== undefined) {
        payload = JSON.stringify(body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(base + path, {
        method,
        headers,
        ...(payload === undefined ? {} : { body: payload }),
      });
      const text = await res.text();
      bodies.push(text);
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.status, headers: res.headers, text, json };
    },
    // The worker a sent message started, and what it listens to, end with the server; so do the
    // browser sessions it holds (a run parked on a handoff keeps its session until then).
    async close() {
      await server.close();
      await mesh.runs.close();
      await mesh.liveViews.close();
      await mesh.browsers.close();
    },
  };
}

/** Signs in to the web UI with the server's operator token: the session cookie and a CSRF token. */
export async function signIn(server: TestServer): Promise<{ cookie: string; csrf: string }> {
  const login = await fetch(`${server.url}login`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: server.token }).toString(),
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const page = await (await fetch(`${server.url}agents`, { headers: { cookie } })).text();
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  return { cookie, csrf };
}

/** Posts a UI form as a signed-in browser does (its cookie, its CSRF token, this origin). */
export function postForm(
  server: TestServer,
  session: { readonly cookie: string; readonly csrf: string },
  path: string,
  fields: Readonly<Record<string, string>> = {},
): Promise<Response> {
  return fetch(`${server.url}${path.replace(/^\//, '')}`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      cookie: session.cookie,
      origin: server.url.replace(/\/$/, ''),
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({ csrf: session.csrf, ...fields }).toString(),
  });
}

/**
 * A test server on a fresh database of `database`, with a scripted agent named `agent` that
 * answers "Hello.": what a suite of route tests starts from. `close` stops the server and drops
 * the database.
 */
export async function openServerWithAgent(
  database: TestDatabase,
  agent: string,
): Promise<{ server: TestServer; close: () => Promise<void> }> {
  const opened = await database.open();
  const server = await startTestServer(opened.db);
  await scriptedAgent(server.mesh, { rules: [], fallback: { content: 'Hello.' } }, agent);
  return {
    server,
    close: async () => {
      await server.close();
      await opened.dispose();
    },
  };
}
