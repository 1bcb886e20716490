import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  isInitializeRequest,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * A stateful MCP server on loopback: the official TypeScript SDK v1 (`Server` with
 * `StreamableHTTPServerTransport` and a session id per `initialize`), as most deployed servers
 * are. It records every HTTP request with the session it named, so tests assert on what a server
 * really received: how many sessions were opened, which calls were sent, which sessions ended.
 */

/** One HTTP request as the server received it. */
export interface ReceivedRequest {
  readonly http: string;
  readonly rpc: string | undefined;
  readonly sessionId: string | undefined;
  readonly tool?: string;
  /** The HTTP status answered (404 for a session the server does not know), when answered. */
  status?: number;
  /** The session id an `initialize` was answered with. */
  opened?: string;
}

/** What a test's server answers; tests change it between requests. */
export interface StatefulMcpState {
  tools: Tool[];
  /** Receive every request and never answer it (a hung server; the TCP side stays open). */
  hang: boolean;
  /** Destroy the connection of every tools/call after receiving it (a failure mid-call). */
  dropCalls: boolean;
}

export interface StatefulMcpServer {
  readonly url: string;
  readonly state: StatefulMcpState;
  readonly received: ReceivedRequest[];
  /** The session ids the server holds open now. */
  sessions(): string[];
  /** Forgets a session without telling the client: its next request gets 404. */
  forgetSession(id: string): void;
  /** Forgets every session (what a restart does to an in-memory server). */
  forgetSessions(): void;
  /** Sends `notifications/tools/list_changed` on every open session. */
  notifyToolsChanged(): Promise<void>;
  /** Resolves when a request matching `test` has been received (at once if one was). */
  whenReceived(test: (r: ReceivedRequest) => boolean): Promise<ReceivedRequest>;
  /** Answers the requests held by `hang` by destroying their connections. */
  releaseHung(): void;
  close(): Promise<void>;
}

export function statefulTool(name: string, description: string): Tool {
  return {
    name,
    description,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
  };
}

export async function startStatefulMcpServer(
  initial: Partial<StatefulMcpState> = {},
): Promise<StatefulMcpServer> {
  const state: StatefulMcpState = { tools: [], hang: false, dropCalls: false, ...initial };
  const received: ReceivedRequest[] = [];
  const waiters: {
    test: (r: ReceivedRequest) => boolean;
    resolve: (r: ReceivedRequest) => void;
  }[] = [];
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>();
  const hung: IncomingMessage[] = [];

  function record(entry: ReceivedRequest): void {
    received.push(entry);
    for (const w of [...waiters])
      if (w.test(entry)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(entry);
      }
  }

  function mcpServer(): Server {
    const server = new Server(
      { name: 'stateful-fake', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: state.tools }));
    server.setRequestHandler(CallToolRequestSchema, (request) => ({
      content: [
        {
          type: 'text',
          text: `${request.params.name} got ${JSON.stringify(request.params.arguments ?? {})}`,
        },
      ],
    }));
    return server;
  }

  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    entry: ReceivedRequest,
  ): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const sessionId = typeof header === 'string' ? header : undefined;
    const existing = sessionId === undefined ? undefined : sessions.get(sessionId);
    if (existing) {
      await existing.transport.handleRequest(req, res, body);
      return;
    }
    if (sessionId === undefined && req.method === 'POST' && isInitializeRequest(body)) {
      const server = mcpServer();
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        onsessioninitialized: (id) => {
          entry.opened = id;
          sessions.set(id, { transport, server });
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    // Streamable HTTP: a session id the server does not know is 404; no id at all is 400.
    res.writeHead(sessionId === undefined ? 400 : 404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        jsonrpc: '2.0',
        error: {
          code: -32001,
          message: sessionId === undefined ? 'no session' : 'Session not found',
        },
        id: null,
      }),
    );
  }

  const http = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = text === '' ? undefined : JSON.parse(text);
      } catch {
        body = undefined;
      }
      const message = body as { method?: string; params?: { name?: string } } | undefined;
      const header = req.headers['mcp-session-id'];
      const entry: ReceivedRequest = {
        http: req.method ?? 'GET',
        rpc: message?.method,
        sessionId: typeof header === 'string' ? header : undefined,
        ...(typeof message?.params?.name === 'string' ? { tool: message.params.name } : {}),
      };
      res.on('finish', () => {
        entry.status = res.statusCode;
      });
      record(entry);
      if (state.hang) {
        hung.push(req);
        return;
      }
      if (state.dropCalls && entry.rpc === 'tools/call') {
        req.socket.destroy();
        return;
      }
      handle(req, res, body, entry).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;

  function forgetSession(id: string): void {
    const s = sessions.get(id);
    sessions.delete(id);
    void s?.server.close().catch(() => undefined);
  }

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    received,
    sessions: () => [...sessions.keys()],
    forgetSession,
    forgetSessions() {
      for (const id of [...sessions.keys()]) forgetSession(id);
    },
    async notifyToolsChanged() {
      await Promise.all([...sessions.values()].map((s) => s.server.sendToolListChanged()));
    },
    whenReceived(test) {
      const seen = received.find(test);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ test, resolve }));
    },
    releaseHung() {
      for (const req of hung.splice(0)) req.socket.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const req of hung.splice(0)) req.socket.destroy();
        for (const s of sessions.values()) void s.server.close().catch(() => undefined);
        sessions.clear();
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
