import type { JsonObject } from '../model/json.ts';
import type { Lease, MessageRecord, NewStep, StepRecord } from '../run/records.ts';
import {
  PARKING_TOOL,
  type AnswerRefusal,
  type ExpiringQuestion,
  type NewAnswer,
  type NewExpiry,
  type NewPark,
  type QuestionRecord,
} from '../run/questions.ts';
import { insertMessage } from './conversations.ts';
import type { Db, Queryable } from './db.ts';
import { recordDeliveredReply } from './outbound-events.ts';
import { finishRun, runUsage, usageSet } from './runs.ts';
import { appendStep } from './step-append.ts';
import {
  STEP_COLUMNS,
  STEP_INSERT_COLUMNS,
  stepFrom,
  stepParams,
  stepValues,
  type StepRow,
} from './step-rows.ts';

/*
 * Questions a run asked its conversation (request_input): parking a run on one, answering it, and
 * expiring it. Each is one transaction, so a question is never posted without its run parked, and
 * an answer never recorded without its run queued again.
 */

const QUESTION = `q.run_id as "runId", q.kind, q.link, q.call_id as "callId", q.step_seq as "stepSeq", q.question,
  coalesce(q.choices, '[]'::jsonb) as choices, q.message_id as "messageId", q.state,
  q.asked_at as "askedAt", q.expires_at as "expiresAt", q.answered_by as "answeredBy",
  q.answer_message_id as "answerMessageId", q.settled_at as "settledAt"`;

/**
 * Parks a run on a question, under its lease: the parking call's step (started), the question
 * posted to the conversation as the agent's message, the open question, and the run in
 * `awaiting_input` with no lease — together.
 */
export function parkRun(
  db: Db,
  lease: Lease,
  park: NewPark,
): Promise<{ step: StepRecord; message: MessageRecord }> {
  return db.transaction(async (tx) => {
    const step = await appendStep(tx, lease, park.callStep, park.usage);
    const message = await insertMessage(tx, { ...park.message, direction: 'outbound' });
    await tx.query(
      `insert into run_questions (run_id, call_id, step_seq, question, choices, message_id, expires_at, kind, link)
       values ($1, $2, $3, $4, $5::jsonb, $6, now() + make_interval(secs => $7::double precision / 1000), $8, $9)`,
      [
        lease.runId,
        park.callId,
        step.seq,
        park.question,
        park.choices.length > 0 ? JSON.stringify(park.choices) : null,
        message.id,
        park.expiresInMs,
        park.kind,
        park.link,
      ],
    );
    // A handoff gives the run's live session to the people of its conversation until hand-back.
    if (park.kind === 'browser_handoff')
      await tx.query(
        `update browser_sessions set state = 'awaiting_human', taken_over_by = null, handed_back_at = null
         where run_id = $1 and state = 'ready'`,
        [lease.runId],
      );
    await finishRun(tx, lease, 'awaiting_input', park.reason);
    return { step, message };
  });
}

/**
 * The next step number of a run no one holds a lease on (one past its last step's), with what
 * else changes on its row. The row's update locks it: an append waits, then finds it not running.
 */
async function reserveSteps(
  tx: Queryable,
  runId: string,
  set: string,
  params: unknown[],
): Promise<number> {
  const { rows } = await tx.query<{ seq: number }>(
    `update runs set updated_at = now(), ${set}
     where id = $1 returning (select coalesce(max(seq), 0) + 1 from run_steps where run_id = $1) as seq`,
    [runId, ...params],
  );
  return rows[0]!.seq;
}

async function insertStep(
  tx: Queryable,
  runId: string,
  seq: number,
  step: NewStep,
): Promise<StepRecord> {
  const { rows } = await tx.query<StepRow>(
    `insert into run_steps ${STEP_INSERT_COLUMNS} values ($1, $2, ${stepValues(3)}) returning ${STEP_COLUMNS}`,
    [runId, seq, ...stepParams(step)],
  );
  return stepFrom(rows[0]!);
}

/** The usage update that adds the time since the question (call `$2`) was asked to the run's parked time. */
const PARKED = usageSet(`jsonb_set(${runUsage('runs')}, '{parkedMs}', to_jsonb(
  coalesce((${runUsage('runs')}->>'parkedMs')::double precision, 0) +
  greatest(0, extract(epoch from now() - (select asked_at from run_questions where run_id = $1 and call_id = $2)) * 1000)))`);

/**
 * Answers a run's open question, as `answer.actor`: the answer as an inbound message, the parking
 * call's observation, the question answered, and the run queued for a worker — or a refusal
 * naming the state that forbids it. The run's row is locked first, so of two answers at once one
 * wins and the other finds the question answered.
 */
export function answerQuestion(
  db: Db,
  answer: NewAnswer,
): Promise<
  | { kind: 'answered'; message: MessageRecord; question: QuestionRecord; conversationId: string }
  | AnswerRefusal
> {
  return db.transaction(async (tx) => {
    const { rows: runs } = await tx.query<{ status: string; conversationId: string | null }>(
      `select status, conversation_id as "conversationId" from runs where id::text = $1 for update`,
      [answer.runId],
    );
    const run = runs[0];
    if (!run) return { kind: 'refused', code: 'run_not_found' };
    const { rows: open } = await tx.query<QuestionRecord & { expired: boolean }>(
      `select ${QUESTION}, q.expires_at <= now() as expired
       from run_questions q where q.run_id = $1 and q.state = 'open'`,
      [answer.runId],
    );
    const question = open[0];
    if (run.status !== 'awaiting_input' || !question || !run.conversationId)
      return { kind: 'refused', code: 'not_awaiting_input', status: run.status };
    if (question.expired) return { kind: 'refused', code: 'question_expired', status: run.status };
    const { rows: spoke } = await tx.query(
      `select 1 from messages where conversation_id = $1 and direction = 'inbound' and actor = $2 limit 1`,
      [run.conversationId, answer.actor],
    );
    if (spoke.length === 0)
      return { kind: 'refused', code: 'not_a_participant', status: run.status };

    const message = await insertMessage(tx, {
      id: answer.messageId,
      conversationId: run.conversationId,
      direction: 'inbound',
      actor: answer.actor,
      body: answer.body,
      relayedBy: answer.relayedBy ?? null,
    });
    const seq = await reserveSteps(tx, answer.runId, `status = 'queued', ${PARKED}`, [
      question.callId,
    ]);
    await settleQuestionCall(
      tx,
      answer.runId,
      question,
      seq,
      'completed',
      answer.observation[question.kind],
    );
    await tx.query(
      `update run_questions set state = 'answered', answered_by = $3, answer_message_id = $4, settled_at = now()
       where run_id = $1 and call_id = $2 and state = 'open'`,
      [answer.runId, question.callId, answer.actor, message.id],
    );
    // The hand-back: the session is the agent's again, attributed to who acted in it (or else to
    // who handed it back).
    if (question.kind === 'browser_handoff')
      await tx.query(
        `update browser_sessions set state = 'ready', handed_back_at = now(),
           taken_over_by = coalesce(taken_over_by, $2)
         where run_id = $1 and state = 'awaiting_human'`,
        [answer.runId, answer.actor],
      );
    const { expired: _expired, ...record } = question;
    return {
      kind: 'answered',
      message,
      conversationId: run.conversationId,
      question: {
        ...record,
        state: 'answered',
        answeredBy: answer.actor,
        answerMessageId: message.id,
      },
    };
  });
}

/** Writes the parking call's observation at `seq` and ends its call step with `status`. */
async function settleQuestionCall(
  tx: Queryable,
  runId: string,
  question: Pick<QuestionRecord, 'callId' | 'stepSeq' | 'kind'>,
  seq: number,
  status: 'completed' | 'failed',
  observation: JsonObject,
): Promise<void> {
  await insertStep(tx, runId, seq, {
    kind: 'observation',
    toolName: PARKING_TOOL[question.kind],
    callId: question.callId,
    observation,
  });
  await tx.query(
    `update run_steps set status = $3, finished_at = now() where run_id = $1 and seq = $2`,
    [runId, question.stepSeq, status],
  );
}

/** Open questions past their expiry, oldest first, with what telling the conversation needs. */
export async function dueQuestions(q: Queryable, limit: number): Promise<ExpiringQuestion[]> {
  const { rows } = await q.query<ExpiringQuestion>(
    `select ${QUESTION}, r.agent_id as "agentId", r.conversation_id as "conversationId", r.budget
     from run_questions q join runs r on r.id = q.run_id
     where q.state = 'open' and q.expires_at <= now()
     order by q.expires_at limit $1`,
    [limit],
  );
  return rows;
}

/**
 * Ends a run whose question expired: the question expired, the parking call's observation, the
 * message to the conversation and its reply step (which keeps the run's end), and the run failed
 * with the reason. False when the question was answered (or expired) first.
 */
export function expireQuestion(db: Db, expiry: NewExpiry): Promise<boolean> {
  return db.transaction(async (tx) => {
    // The run's row first, as an answer locks it: the two serialize instead of deadlocking.
    await tx.query(`select 1 from runs where id = $1 for update`, [expiry.runId]);
    const { rows } = await tx.query<Pick<QuestionRecord, 'callId' | 'stepSeq' | 'kind'>>(
      `update run_questions set state = 'expired', settled_at = now()
       where run_id = $1 and call_id = $2 and state = 'open' and expires_at <= now()
         and exists (select 1 from runs where id = $1 and status = 'awaiting_input')
       returning call_id as "callId", step_seq as "stepSeq", kind`,
      [expiry.runId, expiry.callId],
    );
    const question = rows[0];
    if (!question) return false;
    const message = await insertMessage(tx, { ...expiry.message, direction: 'outbound' });
    const seq = await reserveSteps(
      tx,
      expiry.runId,
      `status = 'failed', reason = $3, finished_at = now(), ${PARKED}`,
      [expiry.callId, expiry.reason],
    );
    await settleQuestionCall(tx, expiry.runId, question, seq, 'failed', expiry.observation);
    await insertStep(tx, expiry.runId, seq + 1, {
      kind: 'reply',
      data: {
        messageId: message.id,
        body: message.body,
        end: { status: 'failed', reason: expiry.reason },
      },
    });
    await recordDeliveredReply(tx, {
      runId: expiry.runId,
      stepSeq: seq + 1,
      conversationId: message.conversationId,
      messageId: message.id,
      characters: message.body.length,
    });
    return true;
  });
}

/** A run's questions, oldest first. */
export async function questionsOfRun(q: Queryable, runId: string): Promise<QuestionRecord[]> {
  const { rows } = await q.query<QuestionRecord>(
    `select ${QUESTION} from run_questions q where q.run_id::text = $1 order by q.asked_at`,
    [runId],
  );
  return rows;
}

/** The questions posted in a conversation, by the message that asked each. */
export async function questionsOfConversation(
  q: Queryable,
  conversationId: string,
): Promise<QuestionRecord[]> {
  const { rows } = await q.query<QuestionRecord>(
    `select ${QUESTION} from run_questions q join messages m on m.id = q.message_id
     where m.conversation_id = $1 order by q.asked_at`,
    [conversationId],
  );
  return rows;
}
