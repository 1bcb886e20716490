import type { JsonObject, JsonValue } from '../model/json.ts';
import type {
  HeldAtEnd,
  Lease,
  NewRun,
  NewStep,
  RunRecord,
  RunStatus,
  StepRecord,
} from '../run/records.ts';
import { insertArtifact } from './artifacts.ts';
import {
  STEP_INSERT_COLUMNS_STARTED,
  stepParams,
  stepValues,
  WRITTEN_COLUMNS,
  writtenStep,
  type WrittenRow,
} from './step-rows.ts';
import { isUniqueViolation, StoreError, type Queryable } from './db.ts';
import { LIVE as LIVE_BROWSER } from './browsers.ts';
import { markDelivered } from './outbound-events.ts';
import { LIVE_WORKSPACE } from './workspaces.ts';
import type { StepBatch, StepWrite } from '../run/run-store.ts';

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

/** The usage parameter of a fenced write: JSON, or null to leave the run's usage as it is. */
function usageParam(usage: JsonObject | undefined): string | null {
  return usage ? JSON.stringify(usage) : null;
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
  const [written] = await appendSteps(q, lease, { steps: [{ step }], ...(usage ? { usage } : {}) });
  return written as StepRecord;
}

/** The parameters of one step after its start offset: {@link stepParams}'s. */
const STEP_PARAMS = 11;

/** Which parts an append statement has: its text depends on nothing else. */
interface AppendShape {
  readonly steps: number;
  readonly commit: boolean;
  readonly finish: number;
  readonly delivered: boolean;
  readonly begun: boolean;
  readonly withdrawn: boolean;
  readonly parts: boolean;
}

const appendStatements = new Map<string, { readonly text: string; readonly params: number }>();

/**
 * The append statement for a batch of `shape`, built once per shape: the same text each time, so
 * naming its prepared statement hashes nothing new. Parameters: the lease ($1-$3), the run's usage
 * as of the batch ($4, kept on its last step), the finished steps' (seq, status) pairs, then the
 * delivered and begun documents, the withdrawn event ids and the prompt parts when present, then
 * per step its start offset and its {@link stepParams}.
 *
 * The run's row is locked, not rewritten: `for no key update` waits for (and then re-checks
 * against) a claim, renewal or release of the lease, so a holder that lost the run writes
 * nothing, and two appends of one run take turns. The steps are numbered after the run's last.
 * Only the first write-ahead stamp of a run updates its row (`committed_at`).
 */
function appendSql(shape: AppendShape): { readonly text: string; readonly params: number } {
  const key = `${shape.steps}.${shape.finish}.${+shape.commit}${+shape.delivered}${+shape.begun}${+shape.withdrawn}${+shape.parts}`;
  const built = appendStatements.get(key);
  if (built !== undefined) return built;
  let n = 4;
  const finishRows = Array.from({ length: shape.finish }, () => {
    n += 2;
    return `($${n - 1}::integer, $${n}::text)`;
  });
  const deliveredParam = shape.delivered ? ++n : 0;
  const begunParam = shape.begun ? ++n : 0;
  const withdrawnParam = shape.withdrawn ? ++n : 0;
  const partsParam = shape.parts ? ++n : 0;
  const rows = Array.from({ length: shape.steps }, (_, i) => {
    const started = ++n;
    const first = n + 1;
    n += STEP_PARAMS;
    const usage = i === shape.steps - 1 ? '$4::jsonb' : 'null::jsonb';
    return `select $1::uuid, reserved.seq + ${i}, ${stepValues(first)},
       now() - make_interval(secs => $${started}::double precision / 1000), ${usage} from reserved`;
  });
  const cte = (name: string, body: string) => `,
     ${name} as (
       ${body})`;
  const text = `with fenced as (
       select id from runs
       where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running' and lease_expires_at > now()
       for no key update),
     reserved as (
       select coalesce((select max(seq) from run_steps where run_id = $1), 0) + 1 as seq from fenced)${
         shape.commit
           ? cte(
               'stamped',
               `update runs set committed_at = now(), updated_at = now()
       where id = $1 and committed_at is null and exists (select 1 from reserved)`,
             )
           : ''
       }${
         finishRows.length === 0
           ? ''
           : cte(
               'finished',
               `update run_steps set status = f.status, finished_at = now()
       from (values ${finishRows.join(', ')}) as f (seq, status)
       where run_steps.run_id = $1 and run_steps.seq = f.seq and exists (select 1 from reserved)`,
             )
       }${
         deliveredParam === 0
           ? ''
           : cte(
               'delivered',
               markDelivered(
                 `$${deliveredParam}`,
                 ' and o.run_id = $1 and exists (select 1 from reserved)',
               ),
             )
       }${
         begunParam === 0
           ? ''
           : cte(
               'begun',
               `insert into outbound_events (id, idempotency_key, run_id, step_seq, call_id, tool_name,
         kind, target, payload, reconciles, state, attempts)
       select e.id, e."idempotencyKey", $1, e."stepSeq", e."callId", e."toolName", e.kind,
         e.target, e.payload, e.reconciles, 'delivering', 1
       from jsonb_to_recordset($${begunParam}::jsonb) as e (at integer, id uuid,
         "idempotencyKey" text, "stepSeq" integer, "callId" text, "toolName" text, kind text,
         target text, payload jsonb, reconciles boolean)
       where exists (select 1 from reserved where reserved.seq + e.at = e."stepSeq")
       on conflict (idempotency_key) do nothing`,
             )
       }${
         withdrawnParam === 0
           ? ''
           : cte(
               'withdrawn',
               `update outbound_events set state = 'failed', attempts = 0, updated_at = now(),
         last_error = 'not run: the call was stopped before it was sent; nothing was sent'
       where id = any($${withdrawnParam}::uuid[]) and run_id = $1 and state = 'delivering'
         and exists (select 1 from reserved)`,
             )
       }${
         partsParam === 0
           ? ''
           : cte(
               'parts',
               `insert into prompt_parts (hash, body)
       select p.hash, p.body from jsonb_to_recordset($${partsParam}::jsonb) as p (hash text, body jsonb)
       where exists (select 1 from reserved)
       on conflict (hash) do nothing`,
             )
       }
     insert into run_steps ${STEP_INSERT_COLUMNS_WITH_USAGE}
     ${rows.join('\n     union all\n     ')}
     returning ${WRITTEN_COLUMNS}`;
  const statement = { text, params: n };
  appendStatements.set(key, statement);
  return statement;
}

/**
 * How often an append is sent when its step numbers clash with another's. Each clash means another
 * append of the run committed since this one's statement began, so of this many appends of one
 * run sent at once (a round's calls ending together), every one lands.
 */
const APPEND_ATTEMPTS = 8;

/**
 * Runs an append. Two appends of one run take turns on its row's lock, but the second numbered
 * its steps from the snapshot it began with: when they clash with the first's, it is sent again,
 * and the new statement numbers them after the first's. Outside a transaction only (inside one,
 * the failed statement has ended it).
 */
async function numbered(q: Queryable, text: string, params: unknown[]): Promise<WrittenRow[]> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await q.query<WrittenRow>(text, params)).rows;
    } catch (error) {
      const clash =
        isUniqueViolation(error) &&
        error instanceof Error &&
        error.message.includes('run_steps_pkey');
      if (!clash || attempt >= APPEND_ATTEMPTS) throw error;
    }
  }
}

/** {@link STEP_INSERT_COLUMNS_STARTED} and the run's usage as of the step. */
const STEP_INSERT_COLUMNS_WITH_USAGE = `${STEP_INSERT_COLUMNS_STARTED.slice(0, -1)}, usage)`;

/**
 * Appends `batch.steps` in order, finishes the earlier call steps `batch.finish` names, marks
 * the effects `batch.delivered` names delivered, records the declared effects `batch.begun`
 * begun with their stamps and keeps the run's usage (on the last step), in one statement: one
 * round trip and one commit, however many steps a round wrote. A committed `tool_call` among them
 * stamps the run's `committed_at`. The fence covers it all, so a worker that lost the run writes
 * nothing. Steps with artifacts take a transaction (the artifacts' bytes are inserted beside the
 * steps, numbered with them).
 */
export async function appendSteps(
  q: Queryable,
  lease: Lease,
  batch: StepBatch,
): Promise<StepRecord[]> {
  const { steps } = batch;
  if (steps.length === 0) throw new TypeError('appendSteps needs at least one step');
  const commit = steps.some((w) => w.step.kind === 'tool_call' && w.step.committed);
  const params: unknown[] = [lease.runId, lease.owner, lease.epoch, usageParam(batch.usage)];
  const finish = batch.finish ?? [];
  for (const f of finish) params.push(f.seq, f.status);
  // The effects the batch's calls delivered: marked so in the same commit, fenced like the steps.
  const delivered = batch.delivered ?? [];
  if (delivered.length > 0) params.push(JSON.stringify(delivered));
  // Declared effects begun with their stamps, where the stamp got the number the holder expected.
  const begun = batch.begun ?? [];
  if (begun.length > 0)
    params.push(JSON.stringify(begun.map(({ at, effect }) => ({ at, ...effect }))));
  // Events begun with a stamp whose call never ran: nothing was sent, and nothing will be.
  const withdrawn = batch.withdrawn ?? [];
  if (withdrawn.length > 0) params.push(withdrawn);
  // A request's prompt snapshot parts, stored once each: what is already stored is left as it is.
  const parts = steps.flatMap((w) => w.prompt ?? []);
  if (parts.length > 0) params.push(JSON.stringify(parts));
  for (const w of steps) params.push(Math.max(0, w.startedMsAgo ?? 0), ...stepParams(w.step));
  const statement = appendSql({
    steps: steps.length,
    commit,
    finish: finish.length,
    delivered: delivered.length > 0,
    begun: begun.length > 0,
    withdrawn: withdrawn.length > 0,
    parts: parts.length > 0,
  });
  if (params.length !== statement.params)
    throw new TypeError(`an append of ${params.length} parameters, built for ${statement.params}`);
  const written = await numbered(q, statement.text, params);
  if (written.length !== steps.length) throw new LeaseLostError(lease);
  // Numbered in order from the reservation: the i-th step written is the i-th sent.
  const sorted = written
    .sort((a, b) => a.seq - b.seq)
    .map((row, i) => writtenStep(lease.runId, (steps[i] as StepWrite).step, row));
  for (const [i, w] of steps.entries())
    for (const artifact of w.artifacts ?? [])
      await insertArtifact(q, {
        ...artifact,
        runId: lease.runId,
        stepSeq: (sorted[i] as StepRecord).seq,
      });
  return sorted;
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
