import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabases } from '../support/db.ts';
import { startTestServer, type TestServer } from '../support/server.ts';
import { scriptedAgent } from '../support/turn.ts';

/*
 * `POST /api/runs/{run}/answer` took an `actor` from the body: an operator who never spoke in a
 * conversation answered its question (and handed back a browser handoff, the same answer) in
 * another operator's name. The acting identity now comes from the credential; only a relay token,
 * made as one and listed as one, may name who it posts for, and what it relays is recorded with
 * it.
 */
describe.each(testDatabases())('who acts on a message or an answer, on $name', (database) => {
  let server: TestServer;
  let dispose: () => Promise<void>;
  const tokens: Record<string, { token: string; actor: string; id: string }> = {};

  beforeAll(async () => {
    const opened = await database.open();
    server = await startTestServer(opened.db);
    dispose = () => opened.dispose();
    await scriptedAgent(
      server.mesh,
      {
        rules: [
          {
            match: 'ask us',
            rounds: [
              {
                toolCalls: [
                  { name: 'request_input', arguments: { question: 'Which option: one or two?' } },
                ],
              },
              { content: 'Going with it.' },
            ],
          },
        ],
        fallback: { content: 'Noted.' },
      },
      'ada',
    );
    for (const [name, relay] of [
      ['grace', false],
      ['bo', false],
      ['slack', true],
    ] as const) {
      const minted = await server.api('POST', '/api/tokens', { name, ...(relay ? { relay } : {}) });
      expect(minted.status, minted.text).toBe(201);
      const { token, id, kind } = minted.json as { token: string; id: string; kind: string };
      expect(kind).toBe(relay ? 'relay' : 'operator');
      tokens[name] = { token, id, actor: `operator:${name}:${id.slice(0, 8)}` };
    }
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await dispose?.();
  });

  const as = (name: string) => ({ token: tokens[name]?.token ?? '' });
  const messages = async (conversationId: string) =>
    (
      (await server.api('GET', `/api/conversations/${conversationId}/messages`)).json as {
        messages: { actor: string; relayed_by: string | null; body: string }[];
      }
    ).messages.map((m) => `${m.actor}${m.relayed_by ? ` via ${m.relayed_by}` : ''}: ${m.body}`);

  it('refuses a body-named actor from an operator token, on messages and answers, writing nothing', async () => {
    const grace = tokens['grace']?.actor ?? '';
    const sent = await server.api(
      'POST',
      '/api/agents/ada/messages?wait=30',
      { body: 'ask us', audience: 'shared' },
      as('grace'),
    );
    const { run_id: run, conversation_id: conversation } = sent.json as {
      run_id: string;
      conversation_id: string;
    };
    expect((sent.json as { status: string }).status).toBe('awaiting_input');

    // Bo never spoke here: naming Grace does not make him her.
    const borrowed = await server.api(
      'POST',
      `/api/runs/${run}/answer`,
      { body: 'option two', actor: grace },
      as('bo'),
    );
    expect(borrowed.status, borrowed.text).toBe(403);
    const error = (borrowed.json as { error: { code: string; message: string } }).error;
    expect(error.code).toBe('relay_not_allowed');
    expect(error.message).toMatch(/^`actor` names who acts, which only a relay token may do/);
    expect(error.message).not.toContain(grace);
    const asHimself = await server.api(
      'POST',
      `/api/runs/${run}/answer`,
      { body: 'two' },
      as('bo'),
    );
    expect((asHimself.json as { error: { code: string } }).error.code).toBe('not_a_participant');
    const posted = await server.api(
      'POST',
      '/api/agents/ada/messages',
      { body: 'from grace, honest', conversation_id: conversation, actor: grace },
      as('bo'),
    );
    expect([posted.status, (posted.json as { error: { code: string } }).error.code]).toEqual([
      403,
      'relay_not_allowed',
    ]);
    // Naming yourself is acting as yourself.
    const own = await server.api(
      'POST',
      `/api/runs/${run}/answer?wait=30`,
      { body: 'option one', actor: grace },
      as('grace'),
    );
    expect(own.status, own.text).toBe(200);
    expect(own.json).toMatchObject({ answered_by: grace, status: 'succeeded' });
    expect(await messages(conversation)).toEqual([
      `${grace}: ask us`,
      'ada: Which option: one or two?',
      `${grace}: option one`,
      'ada: Going with it.',
    ]);
  });

  it('lets a relay token post and answer for the people it names, recording it beside them', async () => {
    const slack = tokens['slack']?.actor ?? '';
    const started = await server.api(
      'POST',
      '/api/agents/ada/messages?wait=30',
      { body: 'ask us', audience: 'shared', actor: 'slack:U042CAROL' },
      as('slack'),
    );
    expect(started.status, started.text).toBe(200);
    const { run_id: run, conversation_id: conversation } = started.json as {
      run_id: string;
      conversation_id: string;
    };
    const answered = await server.api(
      'POST',
      `/api/runs/${run}/answer?wait=30`,
      { body: 'option two', actor: 'slack:U042CAROL' },
      as('slack'),
    );
    expect(answered.status, answered.text).toBe(200);
    expect(answered.json).toMatchObject({ answered_by: 'slack:U042CAROL', status: 'succeeded' });
    expect(await messages(conversation)).toEqual([
      `slack:U042CAROL via ${slack}: ask us`,
      'ada: Which option: one or two?',
      `slack:U042CAROL via ${slack}: option two`,
      'ada: Going with it.',
    ]);
    const { rows } = await server.mesh.db.query<{ provenance: Record<string, unknown> }>(
      'select provenance from runs where id = $1',
      [run],
    );
    expect(rows[0]?.provenance).toMatchObject({ actor: 'slack:U042CAROL', relayedBy: slack });
    const listed = (
      (await server.api('GET', '/api/tokens')).json as { tokens: { label: string; kind: string }[] }
    ).tokens.map((t) => `${t.label} ${t.kind}`);
    expect(listed).toEqual(
      expect.arrayContaining(['grace operator', 'bo operator', 'slack relay']),
    );
  });
});
