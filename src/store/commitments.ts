import type { Queryable } from './db.ts';

/** A commitment as the store keeps it. */
export interface CommitmentRow {
  readonly id: string;
  readonly agentId: string;
  readonly conversationId: string | null;
  readonly runId: string | null;
  readonly text: string;
  readonly dueAt: Date | null;
  readonly state: 'open' | 'fulfilled';
  readonly note: string | null;
  readonly fulfilledAt: Date | null;
  readonly reminderMessageId: string;
  readonly remindedAt: Date | null;
  readonly createdAt: Date;
}

const COLUMNS = `id, agent_id as "agentId", conversation_id as "conversationId", run_id as "runId",
  text, due_at as "dueAt", state, note, fulfilled_at as "fulfilledAt",
  reminder_message_id as "reminderMessageId", reminded_at as "remindedAt",
  created_at as "createdAt"`;

/**
 * Records a commitment made by a run's call, once: a resumed run that runs the verb again gets
 * the first one back. Its conversation is the run's.
 */
export async function insertCommitment(
  q: Queryable,
  c: {
    readonly id: string;
    readonly agentId: string;
    readonly runId: string;
    readonly callId: string;
    readonly text: string;
    readonly dueAt: Date | null;
    readonly reminderMessageId: string;
  },
): Promise<CommitmentRow> {
  const { rows } = await q.query<CommitmentRow>(
    `with made as (
       insert into commitments (id, agent_id, conversation_id, run_id, call_id, text, due_at,
                                reminder_message_id)
       select $1, $2, r.conversation_id, r.id, $4, $5, $6, $7 from runs r
        where r.id = $3 and r.agent_id = $2
       on conflict (run_id, call_id) do nothing
       returning ${COLUMNS}
     )
     select * from made
     union all
     select ${COLUMNS} from commitments where run_id = $3 and call_id = $4
       and not exists (select 1 from made)`,
    [c.id, c.agentId, c.runId, c.callId, c.text, c.dueAt, c.reminderMessageId],
  );
  const row = rows[0];
  if (!row) throw new Error(`run ${c.runId} does not belong to this agent`);
  return row;
}

/**
 * Fulfils one of the agent's open commitments with a note; undefined when `id` is not an open
 * commitment of this agent. Fulfilling again from the same run (a resumed call) answers the same.
 */
export async function fulfilCommitment(
  q: Queryable,
  f: {
    readonly id: string;
    readonly agentId: string;
    readonly runId: string;
    readonly note: string;
  },
): Promise<CommitmentRow | undefined> {
  const { rows } = await q.query<CommitmentRow>(
    `update commitments set state = 'fulfilled', note = $4, fulfilled_at = now(),
            fulfilled_by_run = $3
      where id = $1 and agent_id = $2
        and (state = 'open' or (state = 'fulfilled' and fulfilled_by_run = $3))
      returning ${COLUMNS}`,
    [f.id, f.agentId, f.runId, f.note],
  );
  return rows[0];
}

/** An agent's open commitments, soonest due first (those with no due date last), then oldest. */
export async function openCommitments(
  q: Queryable,
  agentId: string,
  limit = 50,
): Promise<CommitmentRow[]> {
  const { rows } = await q.query<CommitmentRow>(
    `select ${COLUMNS} from commitments where agent_id = $1 and state = 'open'
      order by due_at asc nulls last, created_at asc limit $2`,
    [agentId, limit],
  );
  return rows;
}

/** Open commitments whose due time has come and that were not reminded yet, oldest due first. */
export async function dueCommitments(q: Queryable, limit: number): Promise<CommitmentRow[]> {
  const { rows } = await q.query<CommitmentRow>(
    `select ${COLUMNS} from commitments
      where state = 'open' and reminded_at is null and due_at is not null and due_at <= now()
      order by due_at limit $1`,
    [limit],
  );
  return rows;
}

/** Marks a commitment reminded; false when another sweep (or the agent) got there first. */
export async function markReminded(q: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await q.query(
    `update commitments set reminded_at = now() where id = $1 and reminded_at is null`,
    [id],
  );
  return rowCount > 0;
}
