import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { whileProbing } from '../support/probe.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { scriptedAgent } from '../support/turn.ts';

/*
 * Issue 12 item 3: token counting is superlinear on long runs without spaces, and it ran on the
 * event loop, so one long message (or one long remote tool description) held every other request
 * for 7–15 s. The counter now yields every few milliseconds of work (src/turn/token-count.ts; its
 * unit test holds the yielding exactly). This test holds the whole path with the worst inputs:
 * the turn is answered, and every `GET /api/agents` sent meanwhile is answered too. How long the
 * loop stalled is a figure, not a pass mark: `npm run bench:stall` prints it.
 */

describe.each(testDatabases())('token counting on $name', (database) => {
  let server: TestServer;
  let mcp: FakeMcpServer;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const opened = await database.open();
    server = await startTestServer(opened.db);
    dispose = () => opened.dispose();
    mcp = await startFakeMcpServer({ tools: [] });
    await scriptedAgent(server.mesh, { fallback: { content: 'Read it.' } }, 'reader');
    // Warm the server up (tokenizer tables, first queries) so the probes measure the input.
    expect(
      (await server.api('POST', '/api/agents/reader/messages?wait=60', { body: 'hello' })).status,
    ).toBe(200);
  }, 60_000);

  const listAgents = async () => (await server.api('GET', '/api/agents')).status;

  afterAll(async () => {
    await mcp?.close();
    await server?.close();
    await dispose?.();
  });

  it('does not stall other requests on a 99 KB message without spaces', async () => {
    const measured = await whileProbing(listAgents, async () => {
      const sent = await server.api('POST', '/api/agents/reader/messages?wait=60', {
        body: 'a'.repeat(99_000),
      });
      expect(sent.status).toBe(200);
      expect(sent.json).toMatchObject({ status: 'succeeded', reply: 'Read it.' });
    });
    expect(measured.probes).toBeGreaterThan(0);
    expect(measured.failed).toBe(0);
  });

  it('does not stall other requests on a 100 KB remote tool description', async () => {
    mcp.state.tools = [textTool('lookup', '!?'.repeat(50_000))];
    expect(
      (
        await server.api('POST', '/api/mcp/providers', {
          slug: 'long',
          url: mcp.url,
          allow_loopback_http: true,
        })
      ).status,
    ).toBe(201);
    expect(
      (await server.api('PUT', '/api/agents/reader/mcp/long/token', { value: 'any' })).status,
    ).toBe(200);
    expect((await server.api('POST', '/api/agents/reader/mcp/long/catalog/review')).status).toBe(
      204,
    );

    let runId = '';
    const measured = await whileProbing(listAgents, async () => {
      const sent = await server.api('POST', '/api/agents/reader/messages?wait=60', {
        body: 'look it up',
      });
      expect(sent.status).toBe(200);
      runId = (sent.json as { run_id: string }).run_id;
    });
    // The long tool was priced: carrying every schema counts its 100 KB description.
    const run = (await server.api('GET', `/api/runs/${runId}`)).json as {
      steps: { kind: string; data: Record<string, unknown> | null }[];
    };
    expect((run.steps[0]?.data?.['loading'] as { allTokens: number }).allTokens).toBeGreaterThan(
      25_000,
    );
    expect(measured.failed).toBe(0);
  });
});
