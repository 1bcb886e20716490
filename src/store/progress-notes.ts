import type { Db, Queryable } from './db.ts';

/** A posted progress note: its message, and when. */
export interface ProgressNoteRow {
  readonly messageId: string;
  readonly createdAt: Date;
}

/** How often a run may post: the store refuses past either bound. */
export interface ProgressLimits {
  /** Notes per run. */
  readonly perRun: number;
  /** The least time between two notes of one run. */
  readonly minIntervalMs: number;
}

/** What inserting a note came to: posted (now or by an earlier try of the same call), or refused. */
export type ProgressInsert =
  | { readonly kind: 'posted'; readonly note: ProgressNoteRow; readonly again: boolean }
  | { readonly kind: 'no_conversation' }
  | { readonly kind: 'too_many'; readonly posted: number }
  | { readonly kind: 'too_soon'; readonly waitMs: number };

/**
 * Posts a progress note as the agent's message in the run's conversation, once per call: under a
 * lock on the run (its calls may run side by side), an earlier note of the same call is returned
 * as it was; otherwise the run's limits are checked and the message and its note row are written
 * in one transaction.
 */
export async function insertProgressNote(
  db: Pick<Db, 'transaction'>,
  note: {
    readonly messageId: string;
    readonly runId: string;
    readonly callId: string;
    readonly body: string;
    readonly link: string | null;
  },
  limits: ProgressLimits,
): Promise<ProgressInsert> {
  return db.transaction(async (tx) => {
    await tx.query(`select pg_advisory_xact_lock(hashtext('mesh.progress:' || $1::text))`, [
      note.runId,
    ]);
    const earlier = await tx.query<ProgressNoteRow>(
      `select message_id as "messageId", created_at as "createdAt" from progress_notes
        where run_id = $1 and call_id = $2`,
      [note.runId, note.callId],
    );
    const first = earlier.rows[0];
    if (first) return { kind: 'posted', note: first, again: true };
    const { rows } = await tx.query<{
      conversationId: string | null;
      actor: string;
      posted: number;
      sinceLastMs: number | null;
    }>(
      `select r.conversation_id as "conversationId", a.name as actor,
              (select count(*)::int from progress_notes p where p.run_id = r.id) as posted,
              (select (extract(epoch from now() - max(p.created_at)) * 1000)::float8
                 from progress_notes p where p.run_id = r.id) as "sinceLastMs"
         from runs r join agents a on a.id = r.agent_id
        where r.id = $1`,
      [note.runId],
    );
    const run = rows[0];
    if (!run?.conversationId) return { kind: 'no_conversation' };
    if (run.posted >= limits.perRun) return { kind: 'too_many', posted: run.posted };
    if (run.sinceLastMs !== null && run.sinceLastMs < limits.minIntervalMs)
      return { kind: 'too_soon', waitMs: Math.ceil(limits.minIntervalMs - run.sinceLastMs) };
    await tx.query(
      `insert into messages (id, conversation_id, direction, actor, body)
       values ($1, $2, 'outbound', $3, $4)`,
      [note.messageId, run.conversationId, run.actor, note.body],
    );
    const inserted = await tx.query<ProgressNoteRow>(
      `insert into progress_notes (run_id, call_id, message_id, link) values ($1, $2, $3, $4)
       returning message_id as "messageId", created_at as "createdAt"`,
      [note.runId, note.callId, note.messageId, note.link],
    );
    const row = inserted.rows[0];
    if (!row) throw new Error('unreachable: the insert returned no row');
    return { kind: 'posted', note: row, again: false };
  });
}

/** The ids of a conversation's messages that are progress notes (the chat marks them). */
export async function progressMessageIds(
  q: Queryable,
  conversationId: string,
): Promise<Set<string>> {
  const { rows } = await q.query<{ id: string }>(
    `select p.message_id as id from progress_notes p join messages m on m.id = p.message_id
      where m.conversation_id = $1`,
    [conversationId],
  );
  return new Set(rows.map((r) => r.id));
}

/** A run's progress note as its event stream sends it. */
export interface RunNoteRow {
  /** The message's id (what the chat keys a message by). */
  readonly id: string;
  readonly body: string;
  readonly link: string | null;
  readonly createdAt: Date;
}

/** The progress notes a run posted, oldest first. */
export async function runProgressNotes(q: Queryable, runId: string): Promise<RunNoteRow[]> {
  const { rows } = await q.query<RunNoteRow>(
    `select m.id, m.body, p.link, p.created_at as "createdAt"
       from progress_notes p join messages m on m.id = p.message_id
      where p.run_id = $1 order by p.created_at, m.id`,
    [runId],
  );
  return rows;
}
