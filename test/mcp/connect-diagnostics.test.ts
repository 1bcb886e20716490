import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedFetch } from '../../src/egress/guarded-fetch.ts';
import { openMcpSession } from '../../src/mcp/session.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';

/*
 * Connecting fails for a reason, and the error names it: a refused bearer token, a missing
 * credential, a legacy HTTP+SSE endpoint (a real one, the TypeScript SDK v1's SSE transport), or
 * no MCP endpoint at the URL — never "401 after re-authentication" or a raw HTML page.
 */
describe('why connecting to a remote MCP server failed', () => {
  let guarded: FakeMcpServer;
  let legacy: Server;
  let legacyUrl: string;
  const fetch = createGuardedFetch({ allowLoopbackHttp: true });

  beforeAll(async () => {
    guarded = await startFakeMcpServer({
      tools: [textTool('a', 'A')],
      acceptedTokens: new Set(['the-right-token']),
    });
    // A 2024-11-05 server: GET /sse opens the event stream, POST /messages carries requests.
    const transports = new Map<string, SSEServerTransport>();
    legacy = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      if (req.method === 'GET' && url.pathname === '/sse') {
        const transport = new SSEServerTransport('/messages', res);
        transports.set(transport.sessionId, transport);
        const server = new McpServer({ name: 'legacy', version: '1.0.0' });
        void server.connect(transport);
        return;
      }
      const transport = transports.get(url.searchParams.get('sessionId') ?? '');
      if (req.method === 'POST' && url.pathname === '/messages' && transport) {
        void transport.handlePostMessage(req, res);
        return;
      }
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end(
        `<!DOCTYPE html><html><body><pre>Cannot ${req.method} ${url.pathname}</pre></body></html>`,
      );
    });
    await new Promise<void>((resolve) => legacy.listen(0, '127.0.0.1', resolve));
    legacyUrl = `http://127.0.0.1:${(legacy.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await guarded.close();
    legacy.closeAllConnections();
    await new Promise((resolve) => legacy.close(resolve));
  });

  const failureOf = async (url: string, token: string | undefined) => {
    try {
      const session = await openMcpSession({ url, token: async () => token, fetch });
      await session.close();
      return 'connected';
    } catch (error) {
      return (error as Error).message;
    }
  };

  it('names a refused bearer token, and a missing credential', async () => {
    const refused = await failureOf(guarded.url, 'a-wrong-token');
    expect(refused).toContain("refused the agent's bearer token (401)");
    expect(refused).not.toContain('re-authentication');
    expect(refused).not.toContain('a-wrong-token');
    expect(await failureOf(guarded.url, undefined)).toContain(
      'requires authorization (401) and this connection has no credential',
    );
    expect(await failureOf(guarded.url, 'the-right-token')).toBe('connected');
  });

  it('names a server that does not answer within the request timeout', async () => {
    const silent = createServer(() => undefined); // reads every request, answers none
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (silent.address() as AddressInfo).port;
      const message = await openMcpSession({
        url: `http://127.0.0.1:${port}/mcp`,
        token: async () => undefined,
        fetch,
        timeoutMs: 300,
      }).then(
        () => 'connected',
        (error: unknown) => (error as Error).message,
      );
      expect(message).toBe(
        "could not connect: the server did not answer within 0.3 s (the provider's request timeout)",
      );
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('names a legacy HTTP+SSE endpoint, and a URL with no MCP endpoint, without their HTML', async () => {
    const sse = await failureOf(`${legacyUrl}/sse`, undefined);
    expect(sse).toContain('legacy HTTP+SSE endpoint (MCP 2024-11-05)');
    const nothing = await failureOf(`${legacyUrl}/nothing`, undefined);
    expect(nothing).toContain('no MCP endpoint answers at this URL (404)');
    expect(nothing).toContain('Cannot POST /nothing');
    expect(nothing).not.toMatch(/<|DOCTYPE/);
  });
});
