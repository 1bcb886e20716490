import { describe, expect, it } from 'vitest';
import { remindDueCommitments } from '../../src/app/agents/commitment-reminders.ts';
import { agentCommitments } from '../../src/app/agents/commitments.ts';
import { showAgentOperation, type AgentShown } from '../../src/app/agents/operations.ts';
import { chat } from '../../src/app/conversations/turns.ts';
import { invokeOperation } from '../../src/app/operations/operation.ts';
import { listMessages } from '../../src/store/conversations.ts';
import { testDatabases } from '../support/db.ts';
import { dataOf } from '../support/run.ts';
import { scriptedAgent, suiteMesh } from '../support/turn.ts';

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

describe.each(testDatabases())('commitments on $name', (database) => {
  const meshOf = suiteMesh(database);

  /** An agent that promises on "promise to X; due T", and fulfils what a reminder names. */
  function promisingAgent(): Promise<string> {
    return scriptedAgent(meshOf(), {
      rules: [
        {
          match: 'promise to ([a-z ]+); due ([0-9TZ:.-]+)',
          rounds: [
            { toolCalls: [{ name: 'commit', arguments: { text: '$1', due: '$2' } }] },
            { content: 'I will $1.' },
          ],
        },
        {
          match: `fulfil commitment (${UUID})`,
          rounds: [
            {
              toolCalls: [
                { name: 'fulfil', arguments: { id: '$1', note: 'Sent it to the team.' } },
              ],
            },
            { content: 'Done, and closed.' },
          ],
        },
        {
          match: 'promise badly ([0-9a-zA-Z:-]+)',
          rounds: [
            { toolCalls: [{ name: 'commit', arguments: { text: 'x', due: '$1' } }] },
            { content: 'ok' },
          ],
        },
        { match: '.*', rounds: [{ content: 'ok' }] },
      ],
    });
  }

  it('a commitment falls due: a reminder is posted once, and the run it starts fulfils it', async () => {
    const mesh = meshOf();
    const agentId = await promisingAgent();
    const due = new Date(Date.now() + 3_600_000).toISOString();
    const made = await chat(mesh, {
      agentId,
      actor: 'ada',
      body: `promise to send the report; due ${due}`,
    });
    expect(made.status).toBe('succeeded');
    const [open] = await agentCommitments(mesh, agentId);
    expect(open).toMatchObject({ text: 'send the report', due, state: 'open' });
    // fulfil is offered only once something is open; the next turn lists it in its instructions.
    expect(dataOf(made.steps[0])?.['offered']).not.toContain('fulfil');
    const next = await chat(mesh, {
      agentId,
      actor: 'ada',
      body: 'anything else?',
      conversationId: made.conversationId,
    });
    expect(dataOf(next.steps[0])?.['offered']).toContain('fulfil');

    // Shown to operators: `mesh agents show` and GET /api/agents/{agent}.
    const shown = await invokeOperation<AgentShown>(
      mesh,
      showAgentOperation,
      { agent: agentId },
      { actor: 'ops' },
    );
    expect(shown.commitments).toEqual([open]);
    const face = showAgentOperation.cli;
    const printed = 'print' in face ? face.print(shown, { agent: agentId }) : [];
    expect(printed).toContain('  open commitments (1):');
    expect(printed).toContain(`    ${open!.id}  due ${due}  send the report`);

    // Not due yet: nothing is posted.
    expect(await remindDueCommitments(mesh)).toBe(0);
    // The hour passes.
    await mesh.db.query(
      `update commitments set due_at = now() - interval '1 second' where id = $1`,
      [open!.id],
    );
    expect(await remindDueCommitments(mesh)).toBe(1);
    const { rows } = await mesh.db.query<{ id: string; status: string; actor: string }>(
      `select r.id, r.status, m.actor from runs r join messages m on m.id = r.inbound_message_id
        where m.body like 'Reminder: you committed to this%' and r.agent_id = $1`,
      [agentId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.actor).toBe('mesh');
    const run = await mesh.runs.settled(rows[0]!.id, Number.POSITIVE_INFINITY);
    expect(run?.status).toBe('succeeded');
    expect(await agentCommitments(mesh, agentId)).toEqual([]);
    const messages = await listMessages(mesh.db, made.conversationId);
    const dueAt = (
      await mesh.db.query<{ d: Date }>('select due_at as d from commitments where id = $1', [
        open!.id,
      ])
    ).rows[0]!.d.toISOString();
    expect(messages.map((m) => m.body).slice(-2)).toEqual([
      `Reminder: you committed to this, due ${dueAt}: send the report\nDo it now, and fulfil commitment ${open!.id} with a note on what was done (or say why it cannot be done).`,
      'Done, and closed.',
    ]);

    // A sweep that stopped after posting, before marking: the next one posts nothing again.
    await mesh.db.query(`update commitments set reminded_at = null where id = $1`, [open!.id]);
    await mesh.db.query(`update commitments set state = 'open' where id = $1`, [open!.id]);
    expect(await remindDueCommitments(mesh)).toBe(0);
    const again = await mesh.db.query(
      `select 1 from messages where body like 'Reminder: you committed to this%' and conversation_id = $1`,
      [made.conversationId],
    );
    expect(again.rows).toHaveLength(1);
  });

  it('refuses a due time in the past, one that is not a date-time, and a fulfil of what is not open', async () => {
    const mesh = meshOf();
    const agentId = await promisingAgent();
    const past = await chat(mesh, {
      agentId,
      actor: 'ada',
      body: 'promise badly 2020-01-01T00:00:00Z',
    });
    const observation = (r: typeof past) =>
      r.steps.flatMap((s) => (s.kind === 'observation' ? [s.observation] : []))[0];
    expect(observation(past)).toMatchObject({ kind: 'invalid_input' });
    expect(observation(past)?.text).toContain('field `due` must be in the future');
    const garbled = await chat(mesh, { agentId, actor: 'ada', body: 'promise badly tomorrow-ish' });
    expect(observation(garbled)?.text).toContain('field `due` must be an ISO 8601 date-time');
    expect(observation(garbled)?.text).not.toContain('tomorrow-ish');
    expect(await agentCommitments(mesh, agentId)).toEqual([]);

    // With one open, fulfil is offered: an id that is not one of this agent's open commitments
    // is refused, and the open one stays open.
    const due = new Date(Date.now() + 60_000).toISOString();
    await chat(mesh, { agentId, actor: 'ada', body: `promise to call back; due ${due}` });
    const stranger = '00000000-0000-4000-8000-000000000000';
    const wrong = await chat(mesh, {
      agentId,
      actor: 'ada',
      body: `fulfil commitment ${stranger}`,
    });
    expect(observation(wrong)).toMatchObject({ kind: 'invalid_input' });
    expect(observation(wrong)?.text).toContain('field `id` does not name an open commitment');
    expect((await agentCommitments(mesh, agentId)).map((c) => c.text)).toEqual(['call back']);
  });
});
