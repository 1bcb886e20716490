import type { JsonObject } from '../model/json.ts';
import type {
  ArtifactRecord,
  CallStatus,
  Lease,
  NewArtifact,
  NewRun,
  NewStep,
  RunRecord,
  RunStatus,
  StepKind,
  StepRecord,
  StepStatus,
} from '../run/records.ts';
import { REPLAYS, TOOL_CLASSES, type Replay, type ToolClass } from '../tool/definition.ts';
import { StoreError, type Queryable } from './db.ts';

/** A run_steps row as selected: one column per field of every kind. */
interface StepRow {
  readonly runId: string;
  readonly seq: number;
  readonly kind: StepKind;
  readonly toolName: string | null;
  readonly callId: string | null;
  readonly class: string | null;
  readonly replay: string | null;
  readonly arguments: string | null;
  readonly observation: JsonObject | null;
  readonly data: JsonObject | null;
  readonly status: StepStatus;
  readonly committedAt: Date | null;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
}

function effectOf(row: StepRow): { class: ToolClass; replay: Replay } | null {
  const cls = TOOL_CLASSES.find((c) => c === row.class);
  const replay = REPLAYS.find((r) => r === row.replay);
  return cls && replay ? { class: cls, replay } : null;
}

/** A row as the step record of its kind, with only that kind's fields. */
function stepFrom(row: StepRow): StepRecord {
  const base = {
    runId: row.runId,
    seq: row.seq,
    status: row.status,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
  };
  switch (row.kind) {
    case 'model_request':
    case 'model_response':
    case 'note':
      return { ...base, kind: row.kind, data: row.data ?? {} };
    case 'reply': {
      const data = row.data ?? {};
      return {
        ...base,
        kind: 'reply',
        data: {
          messageId: typeof data['messageId'] === 'string' ? data['messageId'] : '',
          body: typeof data['body'] === 'string' ? data['body'] : '',
        },
      };
    }
    case 'tool_call':
      return {
        ...base,
        kind: 'tool_call',
        toolName: row.toolName ?? '',
        callId: row.callId ?? '',
        effect: effectOf(row),
        arguments: row.arguments ?? '',
        committedAt: row.committedAt,
      };
    case 'observation':
      return {
        ...base,
        kind: 'observation',
        toolName: row.toolName ?? '',
        callId: row.callId ?? '',
        observation: row.observation ?? {},
      };
    default: {
      const never: never = row.kind;
      throw new StoreError('database_error', `unknown step kind ${String(never)}`);
    }
  }
}

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

const RUN_COLUMNS = `id, agent_id as "agentId", conversation_id as "conversationId",
  inbound_message_id as "inboundMessageId", kind, status, reason, provenance, budget, usage, checkpoint,
  lease_owner as "leaseOwner", lease_epoch as "leaseEpoch", lease_expires_at as "leaseExpiresAt",
  committed_at as "committedAt", created_at as "createdAt", started_at as "startedAt", finished_at as "finishedAt"`;

const STEP_COLUMNS = `run_id as "runId", seq, kind, tool_name as "toolName", call_id as "callId", class, replay,
  arguments, observation, data, status, committed_at as "committedAt", started_at as "startedAt",
  finished_at as "finishedAt"`;

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

export async function listRuns(
  q: Queryable,
  filter: { agentId?: string; limit?: number } = {},
): Promise<RunRecord[]> {
  const { rows } = await q.query<RunRecord>(
    `select ${RUN_COLUMNS} from runs where ($1::uuid is null or agent_id = $1) order by created_at desc limit $2`,
    [filter.agentId ?? null, filter.limit ?? 50],
  );
  return rows;
}

/**
 * Claims the oldest runnable run (queued, or running with an expired lease) for `owner`. Skips
 * rows another worker has locked, so many workers on one database never claim the same run.
 */
export async function claimRunnable(
  q: Queryable,
  owner: string,
  leaseMs: number,
): Promise<RunRecord | undefined> {
  const { rows } = await q.query<RunRecord>(
    `update runs set status = 'running', lease_owner = $1, lease_epoch = lease_epoch + 1,
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
export async function reserveSeq(q: Queryable, lease: Lease, count = 1): Promise<number> {
  const { rows } = await q.query<{ seq: number }>(
    `update runs set next_seq = next_seq + $4, updated_at = now()
     where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running' and lease_expires_at > now()
     returning next_seq - $4 as seq`,
    [lease.runId, lease.owner, lease.epoch, count],
  );
  const row = rows[0];
  if (!row) throw new LeaseLostError(lease);
  return row.seq;
}

/** The column values of a new step, in the order of {@link STEP_INSERT_COLUMNS} after run and seq. */
function stepParams(step: NewStep): unknown[] {
  const none = { toolName: null, callId: null, class: null, replay: null, arguments: null };
  const cols = ((): {
    toolName: string | null;
    callId: string | null;
    class: string | null;
    replay: string | null;
    arguments: string | null;
    observation: JsonObject | null;
    data: JsonObject | null;
    status: StepStatus;
    committed: boolean;
    finished: boolean;
  } => {
    switch (step.kind) {
      case 'model_request':
      case 'model_response':
      case 'note':
        return {
          ...none,
          observation: null,
          data: step.data,
          status: 'completed',
          committed: false,
          finished: true,
        };
      case 'reply':
        return {
          ...none,
          observation: null,
          data: { ...step.data },
          status: 'completed',
          committed: false,
          finished: true,
        };
      case 'tool_call':
        return {
          toolName: step.toolName,
          callId: step.callId,
          class: step.effect?.class ?? null,
          replay: step.effect?.replay ?? null,
          arguments: step.arguments,
          observation: null,
          data: null,
          status: step.status,
          committed: step.committed,
          finished: step.status === 'refused',
        };
      case 'observation':
        return {
          ...none,
          toolName: step.toolName,
          callId: step.callId,
          observation: step.observation,
          data: null,
          status: 'completed',
          committed: false,
          finished: true,
        };
      default: {
        const never: never = step;
        throw new StoreError('database_error', `unknown step ${JSON.stringify(never)}`);
      }
    }
  })();
  return [
    step.kind,
    cols.toolName,
    cols.callId,
    cols.class,
    cols.replay,
    cols.arguments,
    cols.observation === null ? null : JSON.stringify(cols.observation),
    cols.data === null ? null : JSON.stringify(cols.data),
    cols.status,
    cols.committed,
    cols.finished,
  ];
}

/** The column list and the placeholders (from `$first`) of {@link stepParams}. */
function stepValues(first: number): string {
  const p = (i: number) => `$${first + i}`;
  return `${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}::jsonb, ${p(7)}::jsonb, ${p(8)},
    case when ${p(9)}::boolean then now() else null end, case when ${p(10)}::boolean then now() else null end`;
}

const STEP_INSERT_COLUMNS = `(run_id, seq, kind, tool_name, call_id, class, replay, arguments, observation, data, status,
  committed_at, finished_at)`;

/** The fenced reservation of step numbers, as a CTE over $1..$4 (run, owner, epoch, count). */
const RESERVE = `reserved as (
  update runs set next_seq = next_seq + $4, updated_at = now()
  where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running' and lease_expires_at > now()
  returning next_seq - $4 as seq)`;

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
export async function appendStep(q: Queryable, lease: Lease, step: NewStep): Promise<StepRecord> {
  const commit = step.kind === 'tool_call' && step.committed;
  const { rows } = await q.query<StepRow>(
    // One update of the run both reserves the number and stamps the commit: two updates of one
    // row in a statement would not see each other.
    `with reserved as (
       update runs set next_seq = next_seq + $4, updated_at = now(),
         committed_at = case when $5::boolean then coalesce(committed_at, now()) else committed_at end
       where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running' and lease_expires_at > now()
       returning next_seq - $4 as seq)
     insert into run_steps ${STEP_INSERT_COLUMNS}
     select $1, reserved.seq, ${stepValues(6)} from reserved
     returning ${STEP_COLUMNS}`,
    [lease.runId, lease.owner, lease.epoch, 1, commit, ...stepParams(step)],
  );
  const row = rows[0];
  if (!row) throw new LeaseLostError(lease);
  return stepFrom(row);
}

/**
 * Appends two steps in order (a refused call and its observation) in one statement.
 */
export async function appendStepPair(
  q: Queryable,
  lease: Lease,
  first: NewStep,
  second: NewStep,
): Promise<[StepRecord, StepRecord]> {
  const { rows } = await q.query<StepRow>(
    `with ${RESERVE}
     insert into run_steps ${STEP_INSERT_COLUMNS}
     select $1, reserved.seq, ${stepValues(5)} from reserved
     union all
     select $1, reserved.seq + 1, ${stepValues(16)} from reserved
     returning ${STEP_COLUMNS}`,
    [lease.runId, lease.owner, lease.epoch, 2, ...stepParams(first), ...stepParams(second)],
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
): Promise<StepRecord> {
  const { rows } = await q.query<StepRow>(
    `with ${RESERVE},
     finished as (
       update run_steps set status = $6, finished_at = now()
       where run_id = $1 and seq = $5 and exists (select 1 from reserved))
     insert into run_steps ${STEP_INSERT_COLUMNS}
     select $1, reserved.seq, ${stepValues(7)} from reserved
     returning ${STEP_COLUMNS}`,
    [lease.runId, lease.owner, lease.epoch, 1, callSeq, callStatus, ...stepParams(step)],
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

export async function listSteps(q: Queryable, runId: string): Promise<StepRecord[]> {
  const { rows } = await q.query<StepRow>(
    `select ${STEP_COLUMNS} from run_steps where run_id = $1 order by seq`,
    [runId],
  );
  return rows.map(stepFrom);
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
): Promise<StepRecord> {
  const seq = await reserveSeq(tx, lease);
  for (const artifact of artifacts)
    await insertArtifact(tx, { ...artifact, runId: lease.runId, stepSeq: seq });
  const recorded = await insertStep(tx, lease.runId, seq, step);
  await finishStep(tx, lease.runId, callSeq, callStatus);
  return recorded;
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
  const { rowCount } = await q.query(
    `update runs set status = $4, reason = $5, finished_at = case when $4 in ('succeeded', 'failed', 'budget_exhausted')
       then now() else finished_at end, lease_owner = null, lease_expires_at = null, updated_at = now()
     where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running'`,
    [lease.runId, lease.owner, lease.epoch, status, reason],
  );
  if (rowCount !== 1) throw new LeaseLostError(lease);
}

export async function insertArtifact(
  q: Queryable,
  artifact: NewArtifact & { readonly runId: string; readonly stepSeq: number | null },
): Promise<void> {
  await q.query(
    `insert into artifacts (id, run_id, step_seq, media_type, size_bytes, sha256, content) values ($1, $2, $3, $4, $5, $6, $7)`,
    [
      artifact.id,
      artifact.runId,
      artifact.stepSeq,
      artifact.mediaType,
      artifact.content.byteLength,
      artifact.sha256,
      artifact.content,
    ],
  );
}

export async function getArtifact(q: Queryable, id: string): Promise<ArtifactRecord | undefined> {
  const { rows } = await q.query<ArtifactRecord>(
    `select id, run_id as "runId", step_seq as "stepSeq", media_type as "mediaType", size_bytes as "sizeBytes", sha256, content
     from artifacts where id = $1`,
    [id],
  );
  return rows[0];
}

/** A conversation's runs, oldest first (each turn's run, by its inbound message). */
export async function listConversationRuns(
  q: Queryable,
  conversationId: string,
): Promise<RunRecord[]> {
  const { rows } = await q.query<RunRecord>(
    `select ${RUN_COLUMNS} from runs where conversation_id = $1 order by created_at`,
    [conversationId],
  );
  return rows;
}
