import type { Lease, RunDraft } from '../run/records.ts';
import type { Queryable } from './db.ts';

/**
 * Saves the text so far of the round's model call, fenced by the lease like every write of the
 * run (a worker that lost it writes nothing). False when the lease is no longer held.
 */
export async function writeDraft(q: Queryable, lease: Lease, draft: RunDraft): Promise<boolean> {
  const { rowCount } = await q.query(
    `insert into run_drafts (run_id, round, attempt, body)
     select $1, $4, $5, $6 from runs
     where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running'
     on conflict (run_id) do update set round = excluded.round, attempt = excluded.attempt,
       body = excluded.body, updated_at = now()`,
    [lease.runId, lease.owner, lease.epoch, draft.round, draft.attempt, draft.body],
  );
  return rowCount === 1;
}

/** The run's draft, if a model call of it is streaming (or streamed and the run has not ended). */
export async function readDraft(q: Queryable, runId: string): Promise<RunDraft | undefined> {
  const { rows } = await q.query<{ round: number; attempt: number; body: string }>(
    'select round, attempt, body from run_drafts where run_id = $1',
    [runId],
  );
  const row = rows[0];
  return row && { round: row.round, attempt: row.attempt, body: row.body };
}
