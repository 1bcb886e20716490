import type { JsonObject } from '../model/json.ts';
import type {
  CallStatus,
  Lease,
  NewArtifact,
  NewRun,
  NewStep,
  RunRecord,
  RunStatus,
  StepRecord,
  StepStatus,
} from '../run/records.ts';
import { insertArtifact } from './artifacts.ts';
import {
  STEP_COLUMNS,
  STEP_INSERT_COLUMNS,
  STEP_INSERT_COLUMNS_STARTED,
  stepFrom,
  stepParams,
  stepValues,
  type StepRow,
} from './step-rows.ts';
import { StoreError, type Queryable } from './db.ts';

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

export const RUN_COLUMNS = `id, agent_id as "agentId", conversation_id as "conversationId",
  inbound_message_id as "inboundMessageId", kind, status, reason, provenance, budget, usage, checkpoint,
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

/**
 * Reserves `count` step numbers for a lease holder, in the caller's transaction. This is also the
 * fence: a worker whose lease expired (and was taken over) gets {@link LeaseLostError} here, before
 * it can write a step or cross a commit boundary.
 */
export async function reserveSeq(
  q: Queryable,
  lease: Lease,
  count = 1,
  usage?: JsonObject,
): Promise<number> {
  const { rows } = await q.query<{ seq: number }>(
    `update runs set next_seq = next_seq + $4, updated_at = now(), usage = coalesce($5::jsonb, usage)
     where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running' and lease_expires_at > now()
     returning next_seq - $4 as seq`,
    [lease.runId, lease.owner, lease.epoch, count, usageParam(usage)],
  );
  const row = rows[0];
  if (!row) throw new LeaseLostError(lease);
  return row.seq;
}

/**
 * The fenced reservation of step numbers, as a CTE over $1..$5 (run, owner, epoch, count, usage):
 * the same update saves the run's usage counters when $5 is not null, so progress costs no
 * statement of its own.
 */
const RESERVE = `reserved as (
  update runs set next_seq = next_seq + $4, updated_at = now(), usage = coalesce($5::jsonb, usage)
  where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running' and lease_expires_at > now()
  returning next_seq - $4 as seq)`;

/** The usage parameter of a fenced write: JSON, or null to leave the run's usage as it is. */
function usageParam(usage: JsonObject | undefined): string | null {
  return usage ? JSON.stringify(usage) : null;
}

/** What a two-step write saves beside its steps. */
export interface PairExtras {
  /** The run's usage counters after the pair (folded into the same statement). */
  readonly usage?: JsonObject;
  /**
   * How long ago (ms) the first step began: a call recorded after it ran keeps its real start,
   * on the database's clock.
   */
  readonly firstStartedMsAgo?: number;
}

export async function insertStep(
  q: Queryable,
  runId: string,
  seq: number,
  step: NewStep,
): Promise<StepRecord> {
  const { rows } = await q.query<StepRow>(
    `insert into run_steps ${STEP_INSERT_COLUMNS} values ($1, $2, ${stepValues(3)}) returning ${STEP_COLUMNS}`,
    [runId, seq, ...stepParams(step)],
  );
  return stepFrom(rows[0] as StepRow);
}

/**
 * Appends a step under the lease in one statement (one round trip, one commit): the reservation
 * fences it, so a worker that lost the run writes nothing. A committed `tool_call` stamps the
 * run's `committed_at` in the same statement: the write-ahead stamp and the call step land together.
 */
export async function appendStep(
  q: Queryable,
  lease: Lease,
  step: NewStep,
  usage?: JsonObject,
): Promise<StepRecord> {
  const commit = step.kind === 'tool_call' && step.committed;
  const { rows } = await q.query<StepRow>(
    // One update of the run reserves the number, stamps the commit and saves the usage: two
    // updates of one row in a statement would not see each other.
    `with reserved as (
       update runs set next_seq = next_seq + $4, updated_at = now(),
         committed_at = case when $5::boolean then coalesce(committed_at, now()) else committed_at end,
         usage = coalesce($6::jsonb, usage)
       where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running' and lease_expires_at > now()
       returning next_seq - $4 as seq)
     insert into run_steps ${STEP_INSERT_COLUMNS}
     select $1, reserved.seq, ${stepValues(7)} from reserved
     returning ${STEP_COLUMNS}`,
    [lease.runId, lease.owner, lease.epoch, 1, commit, usageParam(usage), ...stepParams(step)],
  );
  const row = rows[0];
  if (!row) throw new LeaseLostError(lease);
  return stepFrom(row);
}

/**
 * Appends two steps in order in one statement (one round trip, one commit): a refused call and its
 * observation, or a replayable query call recorded with its observation after it ran.
 */
export async function appendStepPair(
  q: Queryable,
  lease: Lease,
  first: NewStep,
  second: NewStep,
  extras: PairExtras = {},
): Promise<[StepRecord, StepRecord]> {
  const { rows } = await q.query<StepRow>(
    `with ${RESERVE}
     insert into run_steps ${STEP_INSERT_COLUMNS_STARTED}
     select $1, reserved.seq, ${stepValues(7)},
       now() - make_interval(secs => $6::double precision / 1000) from reserved
     union all
     select $1, reserved.seq + 1, ${stepValues(18)}, now() from reserved
     returning ${STEP_COLUMNS}`,
    [
      lease.runId,
      lease.owner,
      lease.epoch,
      2,
      usageParam(extras.usage),
      Math.max(0, extras.firstStartedMsAgo ?? 0),
      ...stepParams(first),
      ...stepParams(second),
    ],
  );
  const sorted = rows.sort((a, b) => a.seq - b.seq);
  if (sorted.length !== 2) throw new LeaseLostError(lease);
  return [stepFrom(sorted[0] as StepRow), stepFrom(sorted[1] as StepRow)];
}

/**
 * Appends a call's observation and finishes the call step with `callStatus`, in one statement.
 */
export async function appendObservation(
  q: Queryable,
  lease: Lease,
  callSeq: number,
  callStatus: StepStatus,
  step: NewStep,
  usage?: JsonObject,
): Promise<StepRecord> {
  const { rows } = await q.query<StepRow>(
    `with ${RESERVE},
     finished as (
       update run_steps set status = $7, finished_at = now()
       where run_id = $1 and seq = $6 and exists (select 1 from reserved))
     insert into run_steps ${STEP_INSERT_COLUMNS}
     select $1, reserved.seq, ${stepValues(8)} from reserved
     returning ${STEP_COLUMNS}`,
    [
      lease.runId,
      lease.owner,
      lease.epoch,
      1,
      usageParam(usage),
      callSeq,
      callStatus,
      ...stepParams(step),
    ],
  );
  const row = rows[0];
  if (!row) throw new LeaseLostError(lease);
  return stepFrom(row);
}

/** Marks a step finished with a status. */
export async function finishStep(
  q: Queryable,
  runId: string,
  seq: number,
  status: StepStatus,
): Promise<void> {
  await q.query(
    `update run_steps set status = $3, finished_at = now() where run_id = $1 and seq = $2`,
    [runId, seq, status],
  );
}

/** Stamps the run as committed (once: the first stamp's time is kept). */
export async function markCommitted(q: Queryable, runId: string): Promise<void> {
  await q.query(`update runs set committed_at = coalesce(committed_at, now()) where id = $1`, [
    runId,
  ]);
}

/**
 * Appends an observation with its artifacts (the whole of an observation too large for its step,
 * the bytes a call returned), numbered with the step, and finishes the call step, in one
 * transaction. The reservation comes first, so a lost lease writes nothing.
 */
export async function appendObservationWithArtifacts(
  tx: Queryable,
  lease: Lease,
  callSeq: number,
  callStatus: CallStatus,
  step: NewStep,
  artifacts: readonly NewArtifact[],
  usage?: JsonObject,
): Promise<StepRecord> {
  const seq = await reserveSeq(tx, lease, 1, usage);
  for (const artifact of artifacts)
    await insertArtifact(tx, { ...artifact, runId: lease.runId, stepSeq: seq });
  const recorded = await insertStep(tx, lease.runId, seq, step);
  await finishStep(tx, lease.runId, callSeq, callStatus);
  return recorded;
}

/**
 * Appends a call recorded after it ran and its observation with the observation's artifacts, in
 * one transaction: what {@link appendStepPair} does when artifacts come along.
 */
export async function appendCallWithArtifacts(
  tx: Queryable,
  lease: Lease,
  call: NewStep,
  observation: NewStep,
  artifacts: readonly NewArtifact[],
  extras: PairExtras = {},
): Promise<[StepRecord, StepRecord]> {
  const seq = await reserveSeq(tx, lease, 2, extras.usage);
  const { rows } = await tx.query<StepRow>(
    `insert into run_steps ${STEP_INSERT_COLUMNS_STARTED}
     values ($1, $2, ${stepValues(4)}, now() - make_interval(secs => $3::double precision / 1000))
     returning ${STEP_COLUMNS}`,
    [lease.runId, seq, Math.max(0, extras.firstStartedMsAgo ?? 0), ...stepParams(call)],
  );
  for (const artifact of artifacts)
    await insertArtifact(tx, { ...artifact, runId: lease.runId, stepSeq: seq + 1 });
  const second = await insertStep(tx, lease.runId, seq + 1, observation);
  return [stepFrom(rows[0] as StepRow), second];
}

/** Replaces the run's usage counters (the ledger computes them) and, optionally, its checkpoint. */
export async function updateProgress(
  q: Queryable,
  lease: Lease,
  progress: { usage?: JsonObject; checkpoint?: JsonObject },
): Promise<void> {
  const { rowCount } = await q.query(
    `update runs set usage = coalesce($4::jsonb, usage), checkpoint = coalesce($5::jsonb, checkpoint), updated_at = now()
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
): Promise<void> {
  // The draft of the run's last round (a streamed reply's text so far) goes with it.
  const { rowCount } = await q.query(
    `with draft as (delete from run_drafts where run_id = $1)
     update runs set status = $4, reason = $5, finished_at = case when $4 in ('succeeded', 'failed', 'budget_exhausted')
       then now() else finished_at end, lease_owner = null, lease_expires_at = null, updated_at = now()
     where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running'`,
    [lease.runId, lease.owner, lease.epoch, status, reason],
  );
  if (rowCount !== 1) throw new LeaseLostError(lease);
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
