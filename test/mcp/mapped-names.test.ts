import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/app/agents/agents.ts';
import { connectAgent } from '../../src/app/mcp/connections.ts';
import { addToolProvider } from '../../src/app/mcp/providers.ts';
import { callToolAsOperator } from '../../src/app/runs/operator-call.ts';
import { freshPglite } from '../support/db.ts';
import { startFakeMcpServer, textTool, type FakeMcpServer } from '../support/mcp-server.ts';
import { signIn, startTestServer, type TestServer } from '../support/server.ts';

/*
 * A server name MCP allows but model providers refuse (`files.read`) is offered under a mapped
 * name; the run view reads the mapping back: beside the mapped name, the server's own.
 */
describe('a mapped remote tool name in the run view', () => {
  let server: TestServer;
  let mcp: FakeMcpServer;

  beforeAll(async () => {
    server = await startTestServer(await freshPglite());
    mcp = await startFakeMcpServer({
      tools: [textTool('files.read', 'Reads a file'), textTool('plain', 'A safe name')],
    });
    const agent = await createAgent(server.mesh, { name: 'ada' });
    await addToolProvider(server.mesh, { slug: 'fs', url: mcp.url, allowLoopbackHttp: true });
    await connectAgent(server.mesh, agent, 'fs', 'tok');
  }, 60_000);
  afterAll(async () => {
    await mcp.close();
    await server.close();
    await server.mesh.db.close();
  });

  it('shows the server’s own name beside the mapped one, and nothing beside a plain one', async () => {
    const call = (tool: string) =>
      callToolAsOperator(server.mesh, { agent: 'ada', tool, arguments: '{}', operator: 'test' });
    const catalog = (await server.api('GET', '/api/agents/ada/mcp/fs/catalog')).json as {
      tools: { tool: string; name: string }[];
    };
    const mapped = catalog.tools.find((t) => t.name === 'files.read')?.tool ?? '';
    expect(mapped).toMatch(/^fs__files_read_[0-9a-f]{8}$/);
    const { cookie } = await signIn(server);
    const page = async (runId: string) =>
      (await fetch(`${server.url}runs/${runId}`, { headers: { cookie } })).text();

    const dotted = await page((await call(mapped)).runId);
    expect(dotted).toContain(`<code class="tool">${mapped}</code>`);
    expect(dotted).toContain('(fs’s <code>files.read</code>)');
    const plain = await page((await call('fs__plain')).runId);
    expect(plain).toContain('<code class="tool">fs__plain</code>');
    expect(plain).not.toContain('fs’s <code>');
  });
});
