import type { JsonObject } from '../model/json.ts';
import { randomUUID } from 'node:crypto';
import type { Lease, MessageRecord, NewStep, ReplyEnd, StepRecord } from '../run/records.ts';
import type { StepBatch, StepWrite } from '../run/run-store.ts';
import { insertArtifact } from './artifacts.ts';
import { MESSAGE } from './conversations.ts';
import { isUniqueViolation, StoreError, type Queryable } from './db.ts';
import { deliveredReplyInsert, markDelivered } from './outbound-events.ts';
import { LeaseLostError } from './runs.ts';
import {
  STEP_INSERT_COLUMNS,
  STEP_INSERT_COLUMNS_APPENDED,
  stepParams,
  stepValues,
  WRITTEN_COLUMNS,
  writtenStep,
  type WrittenRow,
} from './step-rows.ts';

/*
 * A step append: one statement that fences itself by locking the run's row under the lease,
 * numbers its steps after the run's last and writes them with what commits with them (decision
 * 0059). Everything a round writes is one append: one round trip and one commit.
 */

/** The fence and the first step number of an append ($1-$3: the lease). */
const FENCED = `fenced as (
       select id from runs
       where id = $1 and lease_owner = $2 and lease_epoch = $3 and status = 'running' and lease_expires_at > now()
       for no key update),
     reserved as (
       select coalesce((select max(seq) from run_steps where run_id = $1), 0) + 1 as seq from fenced)`;

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
  const text = `with ${FENCED}${
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
     insert into run_steps ${STEP_INSERT_COLUMNS_APPENDED}
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

/** A run's reply: its outbound message, and the run's end it tells of when that is not success. */
export interface ReplyWrite {
  readonly messageId: string;
  readonly conversationId: string;
  readonly actor: string;
  readonly body: string;
  readonly end?: ReplyEnd;
}

const REPLY_SQL = `with ${FENCED},
     message as (
       insert into messages (id, conversation_id, direction, actor, body)
       select $4, $5, 'outbound', $6, $7 from reserved
       returning ${MESSAGE}),
     step as (
       insert into run_steps ${STEP_INSERT_COLUMNS}
       select $1::uuid, reserved.seq, ${stepValues(10)} from reserved),
     delivered as (
       ${deliveredReplyInsert({
         id: '$8',
         run: '$1',
         seq: 'reserved.seq',
         conversation: '$5::text',
         message: '$4::text',
         characters: '$9',
         from: 'from reserved',
       })})
     select message.* from message`;

/**
 * Writes a run's reply in one statement (one round trip, one commit), fenced like every append:
 * the outbound message, the run's reply step, and the reply's delivered outbound event
 * ({@link deliveredReplyInsert}, keyed from the step number the statement took).
 */
export async function appendReply(
  q: Queryable,
  lease: Lease,
  reply: ReplyWrite,
): Promise<MessageRecord> {
  if (reply.body.length > 100_000)
    throw new StoreError('message_too_long', 'a message body is at most 100000 characters');
  const step: NewStep = {
    kind: 'reply',
    data: {
      messageId: reply.messageId,
      body: reply.body,
      ...(reply.end ? { end: { ...reply.end } } : {}),
    },
  };
  const { rows } = await q.query<MessageRecord>(REPLY_SQL, [
    lease.runId,
    lease.owner,
    lease.epoch,
    reply.messageId,
    reply.conversationId,
    reply.actor,
    reply.body,
    randomUUID(),
    reply.body.length,
    ...stepParams(step),
  ]);
  const message = rows[0];
  if (message === undefined) throw new LeaseLostError(lease);
  return message;
}
