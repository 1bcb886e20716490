import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPglite } from '../support/db.ts';
import { serverCatalog, startTestServer, type TestServer } from '../support/server.ts';
import { scriptedAgent } from '../support/turn.ts';

/*
 * An answer of 500 told the caller to "see its log", and the log had neither the request id nor
 * the cause. Every 5xx is logged with the id the caller was given and why, redacted.
 */
describe('a request the server could not answer', () => {
  let server: TestServer;
  const secret = 'tracker-key-0123456789abcdef';

  beforeAll(async () => {
    server = await startTestServer(await freshPglite(), {
      catalog: serverCatalog({
        searchIssues: async () => {
          throw new Error(`the index file is corrupt (opened with ${secret})`);
        },
      }),
    });
    await scriptedAgent(server.mesh, { fallback: { content: 'x' } }, 'ada');
    const captured = await server.api(
      'PUT',
      '/api/agents/ada/packages/example.tracker/secrets/api_token',
      { value: secret },
    );
    expect(captured.status, captured.text).toBe(200);
    const enabled = await server.api('POST', '/api/agents/ada/packages/example.tracker/enable');
    expect(enabled.json).toMatchObject({ state: 'enabled' });
  }, 60_000);

  afterAll(() => server?.close());

  it('is logged with its request id and its cause, and the answer names the request', async () => {
    const failed = await server.api('POST', '/api/agents/ada/tools/tracker_search_issues/call', {
      arguments: { query: 'login bug' },
    });
    expect(failed.status, failed.text).toBe(500);
    const error = (failed.json as { error: { code: string; request_id: string } }).error;
    expect(error.code).toBe('internal_error');
    const line = server.logs.find((l) => l.startsWith(`error request ${error.request_id} `));
    expect(line, server.logs.join('\n')).toBeDefined();
    expect(line).toMatch(/tool_failed: .*; cause internal_error: the index file is corrupt/);
    expect(server.logs.join('\n')).not.toContain(secret);
    expect(failed.text).not.toContain(secret);
  });
});
