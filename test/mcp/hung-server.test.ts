import {
  createServer,
  request,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAgent } from '../../src/app/agents/agents.ts';
import { connectAgent } from '../../src/app/mcp/connections.ts';
import { addToolProvider } from '../../src/app/mcp/providers.ts';
import type { Mesh } from '../../src/app/mesh.ts';
import { assembleMesh } from '../../src/app/compose.ts';
import { callToolAsOperator } from '../../src/app/runs/operator-call.ts';
import { testDatabases } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { scriptedAgent, testInstanceKey } from '../support/turn.ts';

/*
 * A server that accepts a connection and then never answers. A call to one took 82.6 s at a 20 s
 * timeout: four attempts, each opening a session that hung, reported as "could not be reached";
 * and `mcp connect` waited 61 s at `--timeout 20`. A hung server is a timeout, said as one, and
 * nothing is tried again.
 */
describe.each(testDatabases())('a remote server that hangs, on $name', (database) => {
  let upstream: FakeMcpServer;
  let front: Server;
  let url: string;
  let hung = false;
  const held: ServerResponse[] = [];
  let hungRequests = 0;
  let mesh: Mesh;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    upstream = await startFakeMcpServer({ tools: [textTool('post', 'Posts a note')] });
    // In front of a real MCP server: passes requests on, or (hung) accepts them and never answers.
    front = createServer((req: IncomingMessage, res: ServerResponse) => {
      if (hung) {
        hungRequests++;
        req.resume();
        held.push(res);
        return;
      }
      const target = new URL(upstream.url);
      const forwarded = request(
        {
          host: target.hostname,
          port: target.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(forwarded);
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(front.address() as AddressInfo).port}${new URL(upstream.url).pathname}`;
    const opened = await database.open();
    const key = testInstanceKey();
    const first = assembleMesh(opened.db, key);
    await scriptedAgent(first, { fallback: { content: 'x' } }, 'ada');
    await addToolProvider(first, {
      slug: 'stuck',
      url,
      allowLoopbackHttp: true,
      timeoutSeconds: 1,
    });
    await connectAgent(first, await requireAgent(first, 'ada'), 'stuck', 'tok');
    await first.mcp.close();
    // A new Mesh over the same database, as after a restart: its first call opens a session.
    mesh = assembleMesh(opened.db, key);
    dispose = async () => {
      await mesh.mcp.close();
      await opened.dispose();
    };
    hung = true;
  }, 60_000);

  afterAll(async () => {
    for (const res of held) res.destroy();
    await new Promise((resolve) => front?.close(resolve));
    await upstream?.close();
    await dispose?.();
  });

  it('reports a call as a timeout after one attempt, not four', async () => {
    const before = hungRequests;
    const result = await callToolAsOperator(mesh, {
      agent: 'ada',
      tool: 'stuck__post',
      arguments: JSON.stringify({ q: 'hello' }),
      operator: 'test',
    });
    expect(result.observation?.text).toMatch(/stuck did not answer within 1 s/);
    expect(result.observation?.text).not.toMatch(/could not be reached/);
    // One request reached the server (the session's opening); nothing was sent again.
    expect(hungRequests - before).toBe(1);
    expect(upstream.received.filter((r) => r.rpc === 'tools/call')).toHaveLength(0);
  }, 60_000);

  it('gives up connecting at the provider’s timeout, saying so', async () => {
    const agent = await requireAgent(mesh, 'ada');
    const refused = await connectAgent(mesh, agent, 'stuck', 'tok-2').then(
      () => 'connected',
      (error: unknown) => (error as Error).message,
    );
    expect(refused).toMatch(/did not answer within 1 s/);
  }, 30_000);
});
