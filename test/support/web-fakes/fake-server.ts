import { createServer, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { QueryProviderKind } from '../../../src/web/provider.ts';

/** One request as the fake received it, the credential header removed. */
export interface RecordedRequest {
  readonly method: string;
  /** The path without the query string, the base URL's prefix included (`/gw/search`). */
  readonly path: string;
  /** The query string's parameters (a repeated one keeps its last value). */
  readonly query: Readonly<Record<string, string>>;
  /** Lowercased names; the vendor's credential header(s) left out. */
  readonly headers: Readonly<Record<string, string>>;
  /** The JSON body parsed, the raw text when it is not JSON, undefined without one. */
  readonly body: unknown;
  /** The Host header: where the client thought it was sending. */
  readonly host: string;
  /** Whether the request carried the fake's key the vendor's way. */
  readonly authorized: boolean;
}

/** An answer a vendor gives. */
export interface FakeAnswer {
  readonly status: number;
  /** Serialized as JSON, unless a string (sent as it is). */
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** What tests change between requests: shared by the server and the vendor's routes. */
export interface FakeState {
  /** Vendor-shaped search results to answer instead of the generated ones (until reset). */
  results: readonly unknown[] | undefined;
  /** URLs every read of which fails the vendor's way ("could not read that page"). */
  readonly unreadable: Set<string>;
}

/** What makes a fake one vendor's: its credential check, error bodies and routes. */
export interface FakeVendor {
  readonly kind: QueryProviderKind;
  /** Header names that carry the credential: checked, and left out of recorded requests. */
  readonly credentialHeaders: readonly string[];
  authorized(headers: IncomingHttpHeaders): boolean;
  /** The vendor's documented answer to a missing or wrong credential. */
  unauthorized(): FakeAnswer;
  /** The vendor's error body for an injected failure with this status. */
  errorBody(status: number): unknown;
  /** Answers a request (its path without the prefix); undefined is the vendor's 404. */
  route(request: RecordedRequest, path: string, state: FakeState): FakeAnswer | undefined;
  notFound(): FakeAnswer;
}

export interface FailureOptions {
  /** Sent as `Retry-After: <seconds>`. */
  readonly retryAfterSeconds?: number;
  /** The body as sent, instead of the vendor's error body (e.g. a non-JSON 200). */
  readonly body?: string;
  /** More response headers (a redirect's `location`). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** A running fake of one vendor's API. */
export interface WebFake {
  readonly kind: QueryProviderKind;
  /** `http://127.0.0.1:<port>` plus the path prefix, if one was asked for. */
  readonly baseUrl: string;
  /** The key the fake accepts. */
  readonly apiKey: string;
  /** The provider row's settings that fit this fake (Cloudflare: its `accountId`). */
  readonly settings: Readonly<Record<string, string>>;
  /** Every request, in order, failed and hung ones included. */
  readonly requests: readonly RecordedRequest[];
  readonly state: FakeState;
  /** The next `count` requests are answered `status` (the vendor's error body) before any check. */
  failNext(count: number, status: number, options?: FailureOptions): void;
  /** The next `count` requests are never answered (until close). */
  hangNext(count?: number): void;
  /** Forgets requests, pending failures and hangs, scripted results and unreadable URLs. */
  reset(): void;
  close(): Promise<void>;
}

interface PendingFailure {
  readonly status: number;
  readonly options: FailureOptions;
}

const MAX_BODY_BYTES = 1 << 20;

export async function startFakeServer(
  vendor: FakeVendor,
  options: {
    readonly apiKey: string;
    readonly pathPrefix?: string;
    readonly settings?: Readonly<Record<string, string>>;
  },
): Promise<WebFake> {
  const prefix = (options.pathPrefix ?? '').replace(/\/+$/, '');
  const requests: RecordedRequest[] = [];
  const failures: PendingFailure[] = [];
  let hangs = 0;
  const state: FakeState = { results: undefined, unreadable: new Set() };

  const server = createServer((req, res) => {
    void (async () => {
      const recorded = record(req, await readBody(req), vendor);
      requests.push(recorded);
      if (hangs > 0) {
        hangs--;
        return;
      }
      const answer = answerFor(recorded);
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
      res.writeHead(answer.status, {
        'content-type': typeof answer.body === 'string' ? 'text/plain' : 'application/json',
        ...answer.headers,
      });
      res.end(text);
    })().catch(() => res.destroy());
  });

  function answerFor(request: RecordedRequest): FakeAnswer {
    const failure = failures.shift();
    if (failure !== undefined) {
      const { retryAfterSeconds, body, headers } = failure.options;
      return {
        status: failure.status,
        body: body ?? vendor.errorBody(failure.status),
        headers: {
          ...headers,
          ...(retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) }),
        },
      };
    }
    if (prefix !== '' && !request.path.startsWith(`${prefix}/`)) return vendor.notFound();
    if (!request.authorized) return vendor.unauthorized();
    return vendor.route(request, request.path.slice(prefix.length), state) ?? vendor.notFound();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    kind: vendor.kind,
    baseUrl: `http://127.0.0.1:${port}${prefix}`,
    apiKey: options.apiKey,
    settings: Object.freeze({ ...options.settings }),
    requests,
    state,
    failNext(count, status, failureOptions = {}) {
      for (let i = 0; i < count; i++) failures.push({ status, options: failureOptions });
    },
    hangNext(count = 1) {
      hangs += count;
    },
    reset() {
      requests.length = 0;
      failures.length = 0;
      hangs = 0;
      state.results = undefined;
      state.unreadable.clear();
    },
    async close() {
      // Hung requests hold their sockets open; a clean close would wait for them forever.
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function record(req: IncomingMessage, text: string, vendor: FakeVendor): RecordedRequest {
  const url = new URL(req.url ?? '/', 'http://fake');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || vendor.credentialHeaders.includes(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return Object.freeze({
    method: req.method ?? 'GET',
    path: url.pathname,
    query: Object.fromEntries(url.searchParams),
    headers,
    body: text === '' ? undefined : parsed(text),
    host: req.headers.host ?? '',
    authorized: vendor.authorized(req.headers),
  });
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
