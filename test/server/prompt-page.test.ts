import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../../src/app/conversations/turns.ts';
import { freshPglite } from '../support/db.ts';
import { signIn, startTestServer, type TestServer } from '../support/server.ts';
import { scriptedAgent, seedMemory } from '../support/turn.ts';

/*
 * The run page links each model request to what it sent: the prompt snapshot's page shows the
 * messages (after redaction) and the tools offered, and the API answers the same by number.
 */
describe('the prompt snapshot on the run page and the API', () => {
  let server: TestServer;
  let agentId: string;

  beforeAll(async () => {
    server = await startTestServer(await freshPglite());
    agentId = await scriptedAgent(
      server.mesh,
      {
        rules: [
          {
            match: 'deploy',
            rounds: [
              { toolCalls: [{ name: 'recall', arguments: { query: 'deploy window' } }] },
              { content: 'Nothing on record.' },
            ],
          },
        ],
        fallback: { content: 'hi' },
      },
      'ada',
    );
    await seedMemory(server.mesh.db, agentId, 'the deploy window is Friday');
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await server?.mesh.db.close();
  });

  it('links each request to its snapshot page, and the API shows request N', async () => {
    const turn = await chat(server.mesh, {
      agentId,
      actor: 'operator:test',
      body: 'When is the deploy window <b>?</b>',
    });
    expect(turn.status).toBe('succeeded');
    const { cookie } = await signIn(server);
    const get = async (path: string) => {
      const res = await fetch(`${server.url}${path.replace(/^\//, '')}`, { headers: { cookie } });
      return { status: res.status, text: await res.text() };
    };
    const page = await get(`/runs/${turn.runId}`);
    const links = [...page.text.matchAll(/href="(\/runs\/[^"]+\/steps\/(\d+)\/prompt)"/g)];
    expect(links).toHaveLength(2);
    const second = await get(links[1]?.[1] ?? '');
    expect(second.status).toBe(200);
    expect(second.text).toContain('What request 2 sent');
    // The question as sent, escaped; the call of the first round and its result; the tools.
    expect(second.text).toContain('When is the deploy window &lt;b&gt;?&lt;/b&gt;');
    expect(second.text).toContain('data-tool="recall"');
    expect(second.text).toMatch(/→ <code class="tool">recall<\/code>/);

    const api = await server.api('GET', `/api/runs/${turn.runId}?request=2`);
    expect(api.status).toBe(200);
    const prompt = (api.json as { prompt: { request: number; messages: { role: string }[] } })
      .prompt;
    expect(prompt.request).toBe(2);
    expect(prompt.messages.map((m) => m.role)).toEqual(
      expect.arrayContaining(['system', 'user', 'assistant', 'tool']),
    );
    const missing = await server.api('GET', `/api/runs/${turn.runId}?request=7`);
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({ error: { code: 'request_not_found' } });
    // A step that is not a model request has no snapshot page.
    expect((await get(`/runs/${turn.runId}/steps/2/prompt`)).status).toBe(404);
  });
});
