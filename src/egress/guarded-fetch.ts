import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import { checkAddresses, checkUrl, type EgressOptions, type UrlTarget } from './address-policy.ts';

export { EgressRefusedError } from './address-policy.ts';

export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface GuardedFetchOptions {
  /** Development only: allow loopback addresses, and plain http to them. */
  readonly allowLoopbackHttp?: boolean;
  /** Resolves a hostname to every address it has; defaults to `dns.lookup(host, {all: true})`. */
  readonly resolve?: Resolver;
  /** Bounds the time until the final response's headers (DNS, connect, redirects); none by default. */
  readonly timeoutMs?: number;
  /**
   * Where its connections are pooled, shared with the other fetches made with them; a pool of its
   * own when absent, or when it resolves names its own way (a test's resolver).
   */
  readonly pools?: EgressPools;
}

/** The `FetchLike` of the MCP SDK's transports and OAuth helpers. */
export type GuardedFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

const MAX_REDIRECTS = 5;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const NULL_BODY = new Set([101, 103, 204, 205, 304]);
/** Set by this module from the URL and body; a caller's value would be stale after a redirect. */
const MANAGED_HEADERS = ['host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding'];
/** Credentials that must not follow a redirect to another origin. */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie'];
/** Describe the body; dropped with it when a redirect turns the request into a GET. */
const BODY_HEADERS = ['content-type', 'content-encoding', 'content-language', 'content-location'];

async function defaultResolve(hostname: string): Promise<ResolvedAddress[]> {
  const answers = await dnsLookup(hostname, { all: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
}

function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error
    ? reason
    : new DOMException('This operation was aborted', 'AbortError');
}

/** Settles like `promise` unless `signal` aborts first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const onAbort = (): void => reject(abortReason(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** A `lookup` that answers only with the addresses already resolved and checked for this host. */
function pinnedLookup(hostname: string, addresses: readonly ResolvedAddress[]): LookupFunction {
  return (requested, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const usable = addresses.filter((a) => !family || a.family === family);
    const first = usable[0];
    if (requested !== hostname || first === undefined) {
      const error: NodeJS.ErrnoException = new Error(`no checked address for ${requested}`);
      error.code = 'ENOTFOUND';
      callback(error, '');
    } else if (options.all === true) {
      callback(
        null,
        usable.map((a) => ({ address: a.address, family: a.family })),
      );
    } else {
      callback(null, first.address, first.family);
    }
  };
}

async function encodeBody(
  body: RequestInit['body'],
  headers: Headers,
): Promise<Buffer | undefined> {
  const contentType = (value: string): void => {
    if (!headers.has('content-type')) headers.set('content-type', value);
  };
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string') {
    contentType('text/plain;charset=UTF-8');
    return Buffer.from(body, 'utf8');
  }
  if (body instanceof URLSearchParams) {
    contentType('application/x-www-form-urlencoded;charset=UTF-8');
    return Buffer.from(body.toString(), 'utf8');
  }
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof Blob) {
    if (body.type !== '') contentType(body.type);
    return Buffer.from(await body.arrayBuffer());
  }
  throw new TypeError(
    'unsupported request body: use a string, URLSearchParams, ArrayBuffer, typed array or Blob',
  );
}

/** The WHATWG response for a node one; its body streams as the bytes arrive. */
function toResponse(
  res: http.IncomingMessage,
  url: URL,
  redirected: boolean,
  method: string,
  signal: AbortSignal | undefined,
): Response {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 599) {
    res.destroy();
    throw new TypeError(`unsupported response status ${status}`);
  }
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] ?? '', raw[i + 1] ?? '');
  let body: ReadableStream<Uint8Array> | null = null;
  if (method === 'HEAD' || NULL_BODY.has(status)) {
    res.resume();
  } else {
    body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
    if (signal) {
      const onAbort = (): void => {
        res.destroy(abortReason(signal));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      res.once('close', () => signal.removeEventListener('abort', onAbort));
    }
  }
  const response = new Response(body, { status, statusText: res.statusMessage ?? '', headers });
  Object.defineProperty(response, 'url', { value: url.href });
  Object.defineProperty(response, 'redirected', { value: redirected });
  return response;
}

/** The pooled agents of one guarded fetch. */
export interface HopAgents {
  readonly http: http.Agent;
  readonly https: https.Agent;
}

/** A pair of agents of its own: connections pooled for one fetch only. */
function hopAgents(): HopAgents {
  return { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
}

/**
 * The pooled connections of the guarded fetches made with it, as a browser's pool serves its
 * tabs: a connection one of them opened (to an address it checked) serves the others. Each agent's
 * MCP session had a pool of its own, and a server's idle timeout closed its connection between
 * that agent's calls: at 500 agents every tool call opened a connection (decision 0060). Pooled by
 * policy, so a connection to an address only one policy allows (loopback, in development) never
 * serves a fetch under the other. A Mesh holds one, and ends its connections when it closes.
 */
export class EgressPools {
  readonly #byPolicy = new Map<boolean, HopAgents>();
  #closed = false;

  /** The agents of `policy`'s fetches (a fresh pair once closed: nothing is pooled any more). */
  agentsFor(policy: EgressOptions): HopAgents {
    if (this.#closed) return hopAgents();
    const loopback = policy.allowLoopbackHttp === true;
    let agents = this.#byPolicy.get(loopback);
    if (agents === undefined) this.#byPolicy.set(loopback, (agents = hopAgents()));
    return agents;
  }

  /** Ends every pooled connection. */
  close(): void {
    this.#closed = true;
    for (const { http, https } of this.#byPolicy.values()) {
      http.destroy();
      https.destroy();
    }
    this.#byPolicy.clear();
  }
}

/** A pooled socket the server had closed: the request was written to a connection it dropped. */
class StaleSocketError extends Error {
  constructor(readonly reset: Error) {
    super(reset.message, { cause: reset });
  }
}

/** What may be asked again after a stale socket: a request that changes nothing on the server. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Sends one hop's request on the pinned addresses; resolves when its response headers arrive. */
function sendOnce(
  agents: HopAgents,
  url: URL,
  hop: { target: UrlTarget; addresses: readonly ResolvedAddress[] },
  method: string,
  headers: Headers,
  body: Buffer | undefined,
  signal: AbortSignal,
): Promise<http.IncomingMessage> {
  return new Promise((resolveResponse, reject) => {
    if (signal.aborted) return reject(abortReason(signal));
    const outgoing: Record<string, string> = Object.fromEntries(headers);
    if (body !== undefined) outgoing['content-length'] = String(body.byteLength);
    else if (method === 'POST' || method === 'PUT') outgoing['content-length'] = '0';
    const secure = url.protocol === 'https:';
    const request = secure ? https.request : http.request;
    const req = request({
      protocol: url.protocol,
      hostname: hop.target.hostname,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method,
      headers: outgoing,
      agent: secure ? agents.https : agents.http,
      lookup: pinnedLookup(hop.target.hostname, hop.addresses),
    });
    const onAbort = (): void => {
      req.destroy();
      reject(abortReason(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // Stays attached: an error after the response is the body's to report, not a crash.
    req.on('error', (error: NodeJS.ErrnoException) => {
      signal.removeEventListener('abort', onAbort);
      // A kept-alive socket the server closed as it was reused: the request never reached it.
      const stale = req.reusedSocket && (error.code === 'ECONNRESET' || error.code === 'EPIPE');
      reject(stale ? new StaleSocketError(error) : error);
    });
    req.on('response', (res) => {
      signal.removeEventListener('abort', onAbort);
      resolveResponse(res);
    });
    req.end(body);
  });
}

/**
 * Sends one hop's request; a safe request that met a kept-alive socket the server had just closed
 * (its idle timeout racing the reuse) is sent once more on another connection. Any other request
 * is not sent again: the server may have acted on it.
 */
async function send(...request: Parameters<typeof sendOnce>): Promise<http.IncomingMessage> {
  try {
    return await sendOnce(...request);
  } catch (error) {
    if (!(error instanceof StaleSocketError)) throw error;
    const [, , , method] = request;
    if (!SAFE_METHODS.has(method)) throw error.reset;
    return sendOnce(...request).catch((again: unknown) => {
      throw again instanceof StaleSocketError ? again.reset : again;
    });
  }
}

/**
 * A `fetch` for one remote connection that reaches only public addresses (loopback too with the
 * development setting). Each hostname is resolved once per instance and the connection is pinned
 * to the checked addresses, so a DNS answer cannot change between the check and the connect.
 * Redirects are followed here, at most {@link MAX_REDIRECTS}, each hop checked again.
 */
export function createGuardedFetch(options: GuardedFetchOptions = {}): GuardedFetch {
  const policy: EgressOptions = { allowLoopbackHttp: options.allowLoopbackHttp === true };
  const resolve = options.resolve ?? defaultResolve;
  const { timeoutMs } = options;
  const resolved = new Map<string, Promise<readonly ResolvedAddress[]>>();
  const agents = options.pools && !options.resolve ? options.pools.agentsFor(policy) : hopAgents();

  function addressesOf(hostname: string): Promise<readonly ResolvedAddress[]> {
    let entry = resolved.get(hostname);
    if (entry === undefined) {
      entry = resolve(hostname).then((answers) =>
        answers.map((a) => ({ address: a.address, family: a.family })),
      );
      // A failed lookup pinned nothing, so a later request may try again.
      void entry.catch(() => resolved.delete(hostname));
      resolved.set(hostname, entry);
    }
    return entry;
  }

  async function checkedHop(
    url: URL,
    signal: AbortSignal,
  ): Promise<{ target: UrlTarget; addresses: readonly ResolvedAddress[] }> {
    const target = checkUrl(url, policy);
    if (target.ipLiteral) {
      checkAddresses(target, [target.hostname], policy);
      return { target, addresses: [] };
    }
    const addresses = await abortable(addressesOf(target.hostname), signal);
    checkAddresses(
      target,
      addresses.map((a) => a.address),
      policy,
    );
    return { target, addresses };
  }

  return async function guardedFetch(input, init = {}) {
    let url = new URL(input);
    let method = (init.method ?? 'GET').toUpperCase();
    const headers = new Headers(init.headers);
    for (const name of MANAGED_HEADERS) headers.delete(name);
    let body = await encodeBody(init.body, headers);
    if (body !== undefined && (method === 'GET' || method === 'HEAD')) {
      throw new TypeError(`a ${method} request cannot have a body`);
    }
    const redirectMode = init.redirect ?? 'follow';
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();

    // Until the final headers arrive, the caller's signal and the timeout both cancel.
    const phase = new AbortController();
    const onCallerAbort = (): void => phase.abort(signal?.reason);
    signal?.addEventListener('abort', onCallerAbort, { once: true });
    const timer =
      timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            phase.abort(new DOMException(`no response within ${timeoutMs} ms`, 'TimeoutError'));
          }, timeoutMs);
    try {
      for (let hops = 0; ; hops++) {
        const hop = await checkedHop(url, phase.signal);
        const res = await send(agents, url, hop, method, headers, body, phase.signal);
        if (phase.signal.aborted) {
          res.destroy();
          phase.signal.throwIfAborted();
        }
        const status = res.statusCode ?? 0;
        const location = res.headers.location;
        if (!REDIRECTS.has(status) || location === undefined || redirectMode === 'manual') {
          return toResponse(res, url, hops > 0, method, signal);
        }
        res.destroy();
        if (redirectMode === 'error') {
          throw new TypeError(
            `redirect from ${hop.target.display} refused: redirect mode is error`,
          );
        }
        if (hops >= MAX_REDIRECTS) {
          throw new TypeError(
            `too many redirects from ${hop.target.display} (at most ${MAX_REDIRECTS})`,
          );
        }
        const next = new URL(location, url);
        if (next.origin !== url.origin) {
          for (const name of CREDENTIAL_HEADERS) headers.delete(name);
        }
        if (status !== 307 && status !== 308 && method !== 'GET' && method !== 'HEAD') {
          method = 'GET';
          body = undefined;
          for (const name of BODY_HEADERS) headers.delete(name);
        }
        url = next;
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onCallerAbort);
    }
  };
}
