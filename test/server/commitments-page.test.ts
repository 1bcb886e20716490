import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat } from '../../src/app/conversations/turns.ts';
import { freshPglite } from '../support/db.ts';
import { signIn, startTestServer, type TestServer } from '../support/server.ts';
import { scriptedAgent } from '../support/turn.ts';

/* An agent's open commitments on its page (the Tools tab it opens on), escaped, soonest due first. */
describe("an agent's open commitments on its page", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(await freshPglite());
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    await server?.mesh.db.close();
  });

  it('lists what the agent promised and has not fulfilled', async () => {
    const due = new Date(Date.now() + 86_400_000).toISOString();
    const agentId = await scriptedAgent(
      server.mesh,
      {
        rules: [
          {
            match: 'promise',
            rounds: [
              {
                toolCalls: [
                  { name: 'commit', arguments: { text: 'check the <b>build</b>', due } },
                  { name: 'commit', arguments: { text: 'write the notes' } },
                ],
              },
              { content: 'Will do.' },
            ],
          },
        ],
      },
      'keeper',
    );
    expect((await chat(server.mesh, { agentId, actor: 'ada', body: 'promise' })).status).toBe(
      'succeeded',
    );
    const { cookie } = await signIn(server);
    const res = await fetch(`${server.url}agents/keeper/tools`, { headers: { cookie } });
    const text = await res.text();
    expect(res.status).toBe(200);
    const section = text.slice(text.indexOf('<section class="commitments">'));
    expect(section).toContain('Open commitments');
    expect(section).toContain('check the &lt;b&gt;build&lt;/b&gt;');
    expect(section.indexOf('check the')).toBeLessThan(section.indexOf('write the notes'));
    expect(section).toContain('no due time');
  });
});
