import {
  Client,
  ProtocolError,
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
  listTools(signal?: AbortSignal): Promise<ToolListing>;
  callTool(
    name: string,
    args: Readonly<Record<string, unknown>>,
    signal?: AbortSignal,
  ): Promise<CallToolResult>;
  /** Called when the server says its tool list changed. */
  onToolsChanged(listener: () => void): void;
  close(): Promise<void>;
}

/** A transport-level failure: the server could not be reached or did not answer in MCP. */
export class McpTransportError extends MeshError {
  static readonly code = 'mcp_transport_failed';
  constructor(message: string, options?: { cause?: unknown }) {
    super(McpTransportError.code, message, undefined, options);
  }
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
  /** How the connection authenticates (names a refused credential); from `token` when unsaid. */
  readonly credential?: CredentialKind;
}

function describe(error: unknown): string {
  if (isMeshError(error)) return error.message;
  if (error instanceof Error) return error.message.slice(0, 300);
  return 'unknown failure';
}

/** Classifies a failure of a request on an open session. */
function failure(error: unknown, credential: CredentialKind, timeoutMs: number): MeshError {
  if (error instanceof ProtocolError) return new McpProtocolError(error.message, error.code);
  if (isMeshError(error) && !hasCode(error, McpProtocolError.code)) return error;
  const why =
    describeTimeout(error, timeoutMs) ?? describeHttpFailure(error, credential) ?? describe(error);
  return new McpTransportError(why, { cause: error });
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
  const transport = new StreamableHTTPClientTransport(new URL(options.url), {
    fetch: options.fetch,
    authProvider: {
      token: options.token,
      ...(options.onUnauthorized ? { onUnauthorized: options.onUnauthorized } : {}),
    },
  });
  const timeout = options.timeoutMs ?? 60_000;
  // Requests on an open session were authorized once; a refusal later is of the same credential.
  const credential: CredentialKind = options.credential ?? 'bearer';
  try {
    await client.connect(transport, { timeout });
  } catch (error) {
    await client.close().catch(() => undefined);
    const presented =
      options.credential ??
      ((await options.token().catch(() => undefined)) === undefined ? 'none' : 'bearer');
    const why = await describeConnectFailure(
      error,
      { url: options.url, fetch: options.fetch, credential: presented, timeoutMs: timeout },
      describe(error),
    );
    throw new McpTransportError(`could not connect: ${why}`, { cause: error });
  }
  return {
    protocolVersion: transport.protocolVersion,
    async listTools(signal) {
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
            { timeout, ...(signal ? { signal } : {}) },
          );
        } catch (error) {
          throw failure(error, credential, timeout);
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
    },
    async callTool(name, args, signal) {
      try {
        return await client.callTool(
          { name, arguments: { ...args } },
          { timeout, ...(signal ? { signal } : {}) },
        );
      } catch (error) {
        throw failure(error, credential, timeout);
      }
    },
    onToolsChanged(listener) {
      listeners.push(listener);
    },
    async close() {
      await client.close().catch(() => undefined);
    },
  };
}
