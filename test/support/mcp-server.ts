import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { createMcpHandler, Server, type Tool } from '@modelcontextprotocol/server';

/** What a test's MCP server answers; tests change it between requests. */
export interface FakeMcpState {
  tools: Tool[];
  /** Tools per tools/list page. */
  pageSize: number;
  /** Answer every page with this cursor (a server whose cursor never advances). */
  stuckCursor?: string;
  /** Answers a call; defaults to echoing the arguments as text. */
  call?: (name: string, args: Record<string, unknown>) => FakeCallResult | Promise<FakeCallResult>;
  /** The cache lifetime (SEP-2549 `ttlMs`) to give with every listing. */
  ttlMs?: number;
  /** Drop the connection on every tools/call (a transport failure mid-call). */
  dropCalls?: boolean;
  /** The only bearer tokens accepted (401 otherwise); undefined accepts any request. */
  acceptedTokens?: Set<string>;
}

/** What a call answers. */
export type FakeCallResult = {
  content: FakeContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** A content block of a call's result, as the MCP spec (2025-06-18) shapes it. */
export type FakeContentBlock =
  | { type: 'text'; text: string }
  | { type: 'image' | 'audio'; data: string; mimeType: string }
  | { type: 'resource_link'; uri: string; name: string; mimeType?: string }
  | {
      type: 'resource';
      resource:
        | { uri: string; mimeType?: string; text: string }
        | { uri: string; mimeType?: string; blob: string };
    };

/** A real MCP server (the official server SDK) on loopback, recording what it received. */
export interface FakeMcpServer {
  readonly url: string;
  readonly state: FakeMcpState;
  /** Every HTTP request: its method, JSON-RPC method and headers. */
  readonly received: { rpc: string | undefined; headers: IncomingHttpHeaders; tool?: string }[];
  close(): Promise<void>;
}

export function textTool(name: string, description: string, extra: Partial<Tool> = {}): Tool {
  return {
    name,
    description,
    inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
    ...extra,
  };
}

export async function startFakeMcpServer(
  initial: Partial<FakeMcpState> = {},
): Promise<FakeMcpServer> {
  const state: FakeMcpState = { tools: [], pageSize: 100, ...initial };
  const received: FakeMcpServer['received'] = [];
  const handler = createMcpHandler(() => {
    const server = new Server(
      { name: 'same-name-for-every-fake', version: '1.0.0' },
      { capabilities: { tools: { listChanged: true } } },
    );
    server.setRequestHandler('tools/list', (request) => {
      if (state.stuckCursor !== undefined)
        return { tools: state.tools.slice(0, state.pageSize), nextCursor: state.stuckCursor };
      const start = Number(request.params?.cursor ?? '0');
      const end = start + state.pageSize;
      return {
        tools: state.tools.slice(start, end),
        ...(end < state.tools.length ? { nextCursor: String(end) } : {}),
        ...(state.ttlMs === undefined ? {} : { ttlMs: state.ttlMs }),
      };
    });
    server.setRequestHandler('tools/call', (request) => {
      const args = (request.params.arguments ?? {}) as Record<string, unknown>;
      if (state.call) return state.call(request.params.name, args);
      return {
        content: [{ type: 'text', text: `${request.params.name} got ${JSON.stringify(args)}` }],
      };
    });
    return server;
  });

  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let rpc: string | undefined;
      let tool: string | undefined;
      try {
        const parsed = JSON.parse(body.toString('utf8')) as {
          method?: string;
          params?: { name?: string };
        };
        rpc = parsed.method;
        tool = parsed.params?.name;
      } catch {
        rpc = undefined;
      }
      received.push({ rpc, headers: req.headers, ...(tool ? { tool } : {}) });
      if (state.dropCalls && rpc === 'tools/call') {
        req.socket.destroy();
        return;
      }
      const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      if (state.acceptedTokens && (!token || !state.acceptedTokens.has(token))) {
        res.writeHead(401, { 'www-authenticate': 'Bearer realm="fake"' });
        res.end();
        return;
      }
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string') headers.set(k, v);
      const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(req.method === 'POST' ? { body } : {}),
      });
      handler
        .fetch(request)
        .then(async (response) => {
          res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
          if (!response.body) {
            res.end();
            return;
          }
          Readable.fromWeb(response.body as never).pipe(res);
        })
        .catch(() => {
          res.writeHead(500);
          res.end();
        });
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    state,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        http.close(() => resolve());
        http.closeAllConnections();
      }),
  };
}
