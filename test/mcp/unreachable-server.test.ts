import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import { textTool } from '../support/mcp-server.ts';
import { openRemoteAgent, type RemoteAgent } from '../support/remote-agent.ts';

/*
 * A tool with an output schema, on a server that went away: the run failed as
 * `invalid_tool_output`, because the failure's own data was checked against the tool's output
 * schema. A failure is reported as one: a `tool_error` observation the model reads, the run goes on.
 */
describe.each(testDatabases())(
  'a remote tool with an output schema, its server gone, on $name',
  (database) => {
    let remote: RemoteAgent;

    beforeAll(async () => {
      remote = await openRemoteAgent(database, {
        slug: 'gone',
        server: {
          tools: [
            textTool('create_ticket', 'Create a ticket', {
              outputSchema: {
                type: 'object',
                properties: { id: { type: 'string' } },
                required: ['id'],
              },
            }),
          ],
        },
      });
      await remote.server.close();
      // A new Mesh, as after a restart: no session is pooled, so the call must connect.
      await remote.restart();
    }, 60_000);

    afterAll(() => remote?.close());

    it('is a tool_error observation naming the server, and the call is not fatal', async () => {
      const result = await remote.call('gone__create_ticket', { q: 'printer on fire' });
      expect(result.status).toBe('succeeded');
      expect(result.observation?.kind).toBe('tool_error');
      expect(result.observation?.text).toMatch(/gone/);
      expect(result.observation?.text).not.toMatch(/output schema/);
    }, 60_000);
  },
);
