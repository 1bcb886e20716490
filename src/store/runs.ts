import type { JsonObject, JsonValue } from '../model/json.ts';
import type { HeldAtEnd, Lease, NewRun, RunRecord, RunStatus } from '../run/records.ts';
import { StoreError, type Queryable } from './db.ts';
import { LIVE as LIVE_BROWSER } from './browsers.ts';
import { LIVE_WORKSPACE } from './workspaces.ts';

/** The lease was lost (expired and taken by another worker): the holder must stop writing. */
export class LeaseLostError extends StoreError {
  static readonly code = 'lease_lost';
  constructor(lease: Lease) {
    super(
      LeaseLostError.code,
      `run ${lease.runId} is no longer leased to ${lease.owner} (epoch ${lease.epoch})`,
    );
  }
}

/**
 * The usage of the run `alias` names, as of its latest write: an append keeps it on its last step
 * (appends do not rewrite the run's row), a direct write on the run with the step number it is
 * current from (`usage_from`).
 */
export function runUsage(alias: string): string {
  return `coalesce((select s.usage from run_steps s where s.run_id = ${alias}.id
    and s.seq >= ${alias}.usage_from and s.usage is not null order by s.seq desc limit 1), ${alias}.usage)`;
}

/**
 * The SET clause of a direct write of the run's usage (`value`, where `when` holds): current from
 * its next step on.
 */
export function usageSet(value: string, when = 'true'): string {
  return `usage = case when ${when} then ${value} else usage end,
    usage_from = case when ${when}
      then (select coalesce(max(s.seq), 0) + 1 from run_steps s where s.run_id = runs.id)
      else usage_from end`;
}

export const RUN_COLUMNS = `id, agent_id as "agentId", conversation_id as "conversationId",
  inbound_message_id as "inboundMessageId", kind, status, reason, provenance, budget,
  ${runUsage('runs')} as usage, checkpoint,
  lease_owner as "leaseOwner", lease_epoch as "leaseEpoch", lease_expires_at as "leaseExpiresAt",
  interruptions, committed_at as "committedAt", created_at as "createdAt", started_at as "startedAt", finished_at as "finishedAt"`;

/** Inserts a run: queued for a worker, or running under the caller's lease. */
export async function insertRun(q: Queryable, run: NewRun): Promise<RunRecord> {
  const { rows } = await q.query<RunRecord>(
    `insert into runs (id, agent_id, conversation_id, inbound_message_id, kind, status, provenance, budget, checkpoint,
       lease_owner, lease_epoch, lease_expires_at, started_at)
     values ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb, $9::jsonb, $10, $11,
       case when $10::text is null then null else now() + make_interval(secs => $12::double precision / 1000) end,
       case when $10::text is null then null else now() end)
     returning ${RUN_COLUMNS}`,
    [
      run.id,
      run.agentId,
      run.conversationId ?? null,
      run.inboundMessageId ?? null,
      run.kind,
      run.lease ? 'running' : 'queued',
      JSON.stringify(run.provenance),
      JSON.stringify(run.budget),
      JSON.stringify(run.checkpoint ?? {}),
      run.lease?.owner ?? null,
      run.lease ? 1 : 0,
      run.lease?.leaseMs ?? 0,
    ],
  );
  return rows[0] as RunRecord;
}

export async function getRun(q: Queryable, id: string): Promise<RunRecord | undefined> {
  const { rows } = await q.query<RunRecord>(`select ${RUN_COLUMNS} from runs where id = $1`, [id]);
  return rows[0];
}

/**
 * Claims the oldest runnable run (queued, or running with an expired lease) for `owner`. Skips
 * rows another worker has locked, so many workers on one database never claim the same run. A run
 * taken while still running was let go of by its last holder: that counts as an interruption.
 */
export async function claimRunnable(
  q: Queryable,
  owner: string,
  leaseMs: number,
): Promise<RunRecord | undefined> {
  const { rows } = await q.query<RunRecord>(
    `update runs set status = 'running', lease_owner = $1, lease_epoch = lease_epoch + 1,
       interruptions = interruptions + (case when status = 'running' then 1 else 0 end),
       lease_expires_at = now() + make_interval(secs => $2::double precision / 1000),
       started_at = coalesce(started_at, now()), updated_at = now()
     where id = (
       select id from runs
       where status = 'queued' or (status = 'running' and lease_expires_at < now())
       order by created_at
       for update skip locked
       limit 1)
     returning ${RUN_COLUMNS}`,
    [owner, leaseMs],
  );
  return rows[0];
}

/** Extends a lease; false when it was lost. */
export async function renewLease(q: Queryable, lease: Lease, leaseMs: number): Promise<boolean> {
  const { rowCount } = await q.query(
    `update runs set lease_expires_at = now() + make_interval(secs => $4::double precision / 1000)
     where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running'`,
    [lease.runId, lease.owner, lease.epoch, leaseMs],
  );
  return rowCount === 1;
}

/** Gives a run back to the queue (graceful shutdown): another worker may take it at once. */
export async function releaseLease(q: Queryable, lease: Lease): Promise<void> {
  await q.query(
    `update runs set lease_expires_at = now(), updated_at = now()
     where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running'`,
    [lease.runId, lease.owner, lease.epoch],
  );
}

/** Replaces the run's usage counters (the ledger computes them) and, optionally, its checkpoint. */
export async function updateProgress(
  q: Queryable,
  lease: Lease,
  progress: { usage?: JsonObject; checkpoint?: JsonObject },
): Promise<void> {
  const { rowCount } = await q.query(
    `update runs set ${usageSet('$4::jsonb', '$4::jsonb is not null')},
       checkpoint = coalesce($5::jsonb, checkpoint), updated_at = now()
     where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running'`,
    [
      lease.runId,
      lease.owner,
      lease.epoch,
      progress.usage ? JSON.stringify(progress.usage) : null,
      progress.checkpoint ? JSON.stringify(progress.checkpoint) : null,
    ],
  );
  if (rowCount !== 1) throw new LeaseLostError(lease);
}

/** Ends a run with a status and a reason, and clears its lease. Fenced like every write. */
export async function finishRun(
  q: Queryable,
  lease: Lease,
  status: RunStatus,
  reason: string | null,
): Promise<HeldAtEnd> {
  // The draft of the run's last round (a streamed reply's text so far) goes with it. What the run
  // still holds comes back with its end, so releasing it costs a read only when there is one.
  const { rows } = await q.query<HeldAtEnd>(
    `with draft as (delete from run_drafts where run_id = $1)
     update runs set status = $4, reason = $5, finished_at = case when $4 in ('succeeded', 'failed', 'budget_exhausted')
       then now() else finished_at end, lease_owner = null, lease_expires_at = null, updated_at = now(),
       ${usageSet(runUsage('runs'))}
     where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running'
     returning
       exists (select 1 from workspaces where run_id = $1 and state in ${LIVE_WORKSPACE}) as workspace,
       exists (select 1 from browser_sessions where run_id = $1 and state in ${LIVE_BROWSER}) as browser`,
    [lease.runId, lease.owner, lease.epoch, status, reason],
  );
  const held = rows[0];
  if (held === undefined) throw new LeaseLostError(lease);
  return held;
}

/**
 * Announces a run's end to waiters in other processes (NOTIFY on {@link RUN_ENDED_CHANNEL}), as
 * a statement of its own after the end has committed: a NOTIFY inside the finishing statement
 * serialized every run's end on the server's notification lock (bench:tenants lost a fifth of
 * its throughput). A lost announcement costs a waiter one later read, nothing more.
 */
export async function announceRunEnded(q: Queryable, runId: string): Promise<void> {
  await q.query(`select pg_notify('${RUN_ENDED_CHANNEL}', $1)`, [runId]);
}

/** The channel a run's id is sent on (NOTIFY) when its end commits. */
export const RUN_ENDED_CHANNEL = 'mesh_run_ended';

/** Prompt snapshot parts by hash (those stored; a missing one is left out). */
export async function promptParts(
  q: Queryable,
  hashes: readonly string[],
): Promise<Map<string, JsonValue>> {
  if (hashes.length === 0) return new Map();
  const { rows } = await q.query<{ hash: string; body: JsonValue }>(
    `select hash, body from prompt_parts where hash = any($1::text[])`,
    [[...new Set(hashes)]],
  );
  return new Map(rows.map((r) => [r.hash, r.body]));
}
