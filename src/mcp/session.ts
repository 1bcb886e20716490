import {
  Client,
  ProtocolError,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type FetchLike,
  type Tool,
} from '@modelcontextprotocol/client';
import { hasCode, isMeshError, MeshError } from '../tool/errors.ts';
import {
  describeConnectFailure,
  describeHttpFailure,
  describeTimeout,
  type CredentialKind,
} from './connect-failure.ts';

/** How Mesh presents itself to MCP servers. */
const CLIENT_INFO = { name: 'mesh', version: '0.1.0' };

/** Pages a listing may take before Mesh stops reading it. */
export const MAX_LIST_PAGES = 64;

/** A listing as one connection read it. */
export interface ToolListing {
  readonly tools: readonly Tool[];
  readonly pages: number;
  /** Why reading stopped early, when it did (a cursor that did not advance, the page cap). */
  readonly stoppedBecause?: string;
  /** How long the server said the listing stays fresh, when it said so. */
  readonly ttlMs?: number;
}

/** One connection to a remote MCP server, as one agent's account. */
export interface McpSession {
  /** The negotiated protocol version. */
  readonly protocolVersion: string | undefined;
  /** The server's `Mcp-Session-Id`, when it keeps sessions (a stateless server has none). */
  readonly sessionId: string | undefined;
  listTools(signal?: AbortSignal): Promise<ToolListing>;
  callTool(
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal?: AbortSignal,
  ): Promise<CallToolResult>;
  /** Called when the server says its tool list changed. */
  onToolsChanged(listener: () => void): void;
  /**
   * Ends the session: an HTTP `DELETE` with its id (so the server can free it; waited for at most
   * {@link TERMINATE_WAIT_MS}), then the connection is closed.
   */
  close(): Promise<void>;
  /** Closes the connection without a `DELETE`: for a session the server no longer knows. */
  discard(): Promise<void>;
}

/** How long closing a session waits for the server to answer its `DELETE`. */
export const TERMINATE_WAIT_MS = 5_000;

/**
 * Whether a failed request could have reached the server. `not_sent`: it certainly did not act
 * (no connection could be made, or the server refused the session before reading the request),
 * so even a tool call may be sent again. `maybe_sent`: it may have acted; a call is never re-sent.
 */
export type Delivery = 'not_sent' | 'maybe_sent';

/** A transport-level failure: the server could not be reached or did not answer in MCP. */
export class McpTransportError extends MeshError {
  static readonly code = 'mcp_transport_failed';
  constructor(
    message: string,
    options?: {
      cause?: unknown;
      delivery?: Delivery;
      /** The server answered 404 to the session's id: it ended the session (Streamable HTTP). */
      sessionExpired?: boolean;
      /** The caller gave up on the request (its signal): the session is not at fault. */
      cancelled?: boolean;
      /** The server accepted the request and did not answer within the provider's timeout. */
      timedOut?: boolean;
    },
  ) {
    super(
      McpTransportError.code,
      message,
      {
        delivery: options?.delivery ?? 'maybe_sent',
        ...(options?.sessionExpired ? { sessionExpired: true } : {}),
        ...(options?.cancelled ? { cancelled: true } : {}),
        ...(options?.timedOut ? { timedOut: true } : {}),
      },
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
  }
}

/** What a transport failure says about the request that failed (see {@link Delivery}). */
export function transportFailure(
  error: unknown,
):
  | { delivery: Delivery; sessionExpired: boolean; cancelled: boolean; timedOut: boolean }
  | undefined {
  if (!hasCode(error, McpTransportError.code)) return undefined;
  return {
    delivery: error.data?.['delivery'] === 'not_sent' ? 'not_sent' : 'maybe_sent',
    sessionExpired: error.data?.['sessionExpired'] === true,
    cancelled: error.data?.['cancelled'] === true,
    timedOut: error.data?.['timedOut'] === true,
  };
}

/** The server answered a request with a JSON-RPC error. */
export class McpProtocolError extends MeshError {
  static readonly code = 'mcp_error';
  constructor(
    message: string,
    readonly rpcCode: number,
  ) {
    super(McpProtocolError.code, message, { rpcCode });
  }
}

export interface SessionOptions {
  readonly url: string;
  /** The agent's own credential for this server, read when a request needs it. */
  readonly token: () => Promise<string | undefined>;
  /**
   * Called when the server answers 401 to a credential; the request is then retried once with
   * whatever `token` gives next (an OAuth binding refreshes here).
   */
  readonly onUnauthorized?: () => Promise<void>;
  /** The egress-guarded fetch of this connection (DNS resolved once and pinned). */
  readonly fetch: FetchLike;
  readonly timeoutMs?: number;
  /** Abandons the opening (the session is no longer wanted): connecting fails at once. */
  readonly signal?: AbortSignal;
  /** How the connection authenticates (names a refused credential); from `token` when unsaid. */
  readonly credential?: CredentialKind;
}

function describe(error: unknown): string {
  if (isMeshError(error)) return error.message;
  if (error instanceof Error) return error.message.slice(0, 300);
  return 'unknown failure';
}

/** Socket errors raised before a request could be written: nothing reached the server. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** Whether an error, or one in its cause chain, is a failure to connect at all. */
function neverConnected(error: unknown): boolean {
  let at: unknown = error;
  for (let depth = 0; depth < 6 && typeof at === 'object' && at !== null; depth++) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_CONNECTED.has(code)) return true;
    at = (at as { cause?: unknown }).cause;
  }
  return false;
}

/** A server's words for a session id it does not hold (servers on the SDK's Express example). */
const UNKNOWN_SESSION =
  /\bsession\b.{0,40}\b(?:invalid|not found|unknown|expired)\b|\bno valid session\b|\binvalid session\b/i;

/**
 * Whether a server refused a request because it does not hold the session it was sent on, so it
 * processed nothing: a 404 (what Streamable HTTP prescribes), or a 400 whose error says the
 * session id is not valid. The SDK's own Express servers (server-everything among them) answer a
 * restart's forgotten session that way: `400 Bad Request: No valid session ID provided`.
 */
function sessionUnknown(error: SdkHttpError): boolean {
  const data = error.data as { status?: unknown; text?: unknown } | undefined;
  if (data?.status === 404) return true;
  if (data?.status !== 400 || typeof data.text !== 'string') return false;
  return UNKNOWN_SESSION.test(data.text.slice(0, 1024));
}

/**
 * Classifies a failure of a request on an open session (`sessionId`: the one it was sent on;
 * `signal`: the caller's, whose abort is the caller's doing, not the session's).
 */
function failure(
  error: unknown,
  sessionId: string | undefined,
  signal: AbortSignal | undefined,
  named: { readonly credential: CredentialKind; readonly timeoutMs: number },
): MeshError {
  if (error instanceof ProtocolError) return new McpProtocolError(error.message, error.code);
  if (isMeshError(error) && !hasCode(error, McpProtocolError.code)) return error;
  if (signal?.aborted)
    return new McpTransportError('the request was cancelled', { cause: error, cancelled: true });
  // Streamable HTTP: 404 to a request carrying a session id means the server ended the session
  // and did not process the request; the client starts a new session (a 400 saying so, too).
  if (sessionId !== undefined && error instanceof SdkHttpError && sessionUnknown(error))
    return new McpTransportError('the server ended the session', {
      cause: error,
      delivery: 'not_sent',
      sessionExpired: true,
    });
  const timedOut = describeTimeout(error, named.timeoutMs);
  const why = timedOut ?? describeHttpFailure(error, named.credential) ?? describe(error);
  return new McpTransportError(why, {
    cause: error,
    delivery: neverConnected(error) ? 'not_sent' : 'maybe_sent',
    ...(timedOut === undefined ? {} : { timedOut: true }),
  });
}

/**
 * Every page of the server's tool list, up to {@link MAX_LIST_PAGES}; a listing cut short (a
 * repeated cursor, too many pages) says why. The first page's `ttlMs`, if any, is kept.
 */
async function listAllTools(
  client: Client,
  transport: StreamableHTTPClientTransport,
  named: { readonly credential: CredentialKind; readonly timeoutMs: number },
  signal: AbortSignal | undefined,
): Promise<ToolListing> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  let pages = 0;
  let ttlMs: number | undefined;
  const seen = new Set<string>();
  while (true) {
    let page;
    try {
      page = await client.request(
        { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
        { timeout: named.timeoutMs, ...(signal ? { signal } : {}) },
      );
    } catch (error) {
      throw failure(error, transport.sessionId, signal, named);
    }
    pages++;
    tools.push(...page.tools);
    const pageTtl = (page as { ttlMs?: unknown }).ttlMs;
    if (pages === 1 && typeof pageTtl === 'number' && pageTtl >= 0) ttlMs = pageTtl;
    const next = page.nextCursor;
    if (next === undefined || next === '')
      return { tools, pages, ...(ttlMs === undefined ? {} : { ttlMs }) };
    if (next === cursor || seen.has(next))
      return {
        tools,
        pages,
        stoppedBecause: 'the server repeated a cursor',
        ...(ttlMs === undefined ? {} : { ttlMs }),
      };
    if (pages >= MAX_LIST_PAGES)
      return {
        tools,
        pages,
        stoppedBecause: `the listing passed ${MAX_LIST_PAGES} pages`,
        ...(ttlMs === undefined ? {} : { ttlMs }),
      };
    seen.add(next);
    cursor = next;
  }
}

/**
 * Connects to a remote MCP server over Streamable HTTP (never stdio), negotiating the current
 * protocol revision and falling back to 2025-11-25 when the server speaks only that.
 */
export async function openMcpSession(options: SessionOptions): Promise<McpSession> {
  const listeners: (() => void)[] = [];
  const client = new Client(CLIENT_INFO, {
    versionNegotiation: { mode: 'auto' },
    listChanged: {
      tools: {
        autoRefresh: false,
        onChanged: () => {
          for (const l of listeners) l();
        },
      },
    },
  });
  const openSignal = options.signal;
  // An abandoned opening also cuts its requests; the signal is never aborted once it is open.
  const fetch: FetchLike = openSignal
    ? (url, init) =>
        options.fetch(url, {
          ...init,
          signal: init?.signal ? AbortSignal.any([init.signal, openSignal]) : openSignal,
        })
    : options.fetch;
  const transport = new StreamableHTTPClientTransport(new URL(options.url), {
    fetch,
    authProvider: {
      token: options.token,
      ...(options.onUnauthorized ? { onUnauthorized: options.onUnauthorized } : {}),
    },
  });
  const timeout = options.timeoutMs ?? 60_000;
  // Requests on an open session were authorized once; a refusal later is of the same credential.
  const named = { credential: options.credential ?? ('bearer' as const), timeoutMs: timeout };
  let abandon = () => {};
  const abandoned = new Promise<never>((_, reject) => {
    abandon = () => reject(new Error('the opening was abandoned'));
  });
  void abandoned.catch(() => undefined);
  openSignal?.addEventListener('abort', abandon, { once: true });
  try {
    openSignal?.throwIfAborted();
    const connecting = client.connect(transport, { timeout });
    void connecting.catch(() => undefined);
    await Promise.race([connecting, abandoned]);
  } catch (error) {
    await client.close().catch(() => undefined);
    const presented =
      options.credential ??
      ((await options.token().catch(() => undefined)) === undefined ? 'none' : 'bearer');
    const why = openSignal?.aborted
      ? describe(error)
      : await describeConnectFailure(
          error,
          { url: options.url, fetch: options.fetch, credential: presented, timeoutMs: timeout },
          describe(error),
        );
    // Opening sends no tool call: whatever failed, no call of the caller's reached the server.
    // One that accepted the opening and then said nothing is hung: waiting again helps no one.
    throw new McpTransportError(`could not connect: ${why}`, {
      cause: error,
      delivery: 'not_sent',
      ...(!openSignal?.aborted && describeTimeout(error, timeout) !== undefined
        ? { timedOut: true }
        : {}),
    });
  } finally {
    openSignal?.removeEventListener('abort', abandon);
  }
  return {
    protocolVersion: transport.protocolVersion,
    get sessionId() {
      return transport.sessionId;
    },
    listTools: (signal) => listAllTools(client, transport, named, signal),
    async callTool(name, args, signal) {
      try {
        return await client.callTool(
          { name, arguments: { ...args } },
          { timeout, ...(signal ? { signal } : {}) },
        );
      } catch (error) {
        throw failure(error, transport.sessionId, signal, named);
      }
    },
    onToolsChanged(listener) {
      listeners.push(listener);
    },
    async close() {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        transport.terminateSession().catch(() => undefined),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, TERMINATE_WAIT_MS);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
      // Closing aborts whatever is still in flight, a DELETE left unanswered included.
      await client.close().catch(() => undefined);
    },
    async discard() {
      await client.close().catch(() => undefined);
    },
  };
}
