import { randomUUID } from 'node:crypto';
import type { DeliveredEffect } from '../tool/outbound.ts';
import type {
  NewOutboundEvent,
  OutboundEventRecord,
  OutboundStore,
  RecordedEffect,
  StoredReceipt,
} from '../outbound/records.ts';
import { StoreError, type Queryable } from './db.ts';

const COLUMNS = `id, idempotency_key as "idempotencyKey", run_id as "runId", step_seq as "stepSeq",
  call_id as "callId", tool_name as "toolName", kind, target, payload, state, attempts,
  last_error as "lastError", external_id as "externalId", link, result, reconciles,
  created_at as "createdAt", updated_at as "updatedAt"`;

/** The longest error text kept per event: a provider's message, not its whole answer. */
const MAX_ERROR = 2000;

function clip(error: string): string {
  return error.length > MAX_ERROR ? `${error.slice(0, MAX_ERROR - 1)}…` : error;
}

async function one(q: Queryable, sql: string, params: readonly unknown[]): Promise<void> {
  const { rowCount } = await q.query(sql, params);
  if (rowCount !== 1)
    throw new StoreError('outbound_event_missing', 'the outbound event to update is not recorded');
}

/** `outbound_events` as the outbound machinery's store. */
export function outboundStore(q: Queryable): OutboundStore {
  return Object.freeze({
    async record(event: NewOutboundEvent): Promise<RecordedEffect> {
      // One statement: insert with the first attempt begun, or hand back what is recorded under
      // the key (a resumed call). Rows inserted by this statement are not visible to its own
      // second select, so exactly one of the two answers.
      const { rows } = await q.query<OutboundEventRecord & { begun: boolean }>(
        `with inserted as (
           insert into outbound_events
             (id, idempotency_key, run_id, step_seq, call_id, tool_name, kind, target, payload,
              reconciles, state, attempts)
           values ($1::uuid, $2, $3::uuid, $4::int, $5, $6, $7, $8, $9::jsonb, $10::boolean,
             'delivering', 1)
           on conflict (idempotency_key) do nothing
           returning ${COLUMNS}, true as begun)
         select * from inserted
         union all
         select ${COLUMNS}, false as begun from outbound_events where idempotency_key = $2
         limit 1`,
        [
          event.id,
          event.idempotencyKey,
          event.runId,
          event.stepSeq,
          event.callId,
          event.toolName,
          event.kind,
          event.target,
          JSON.stringify(event.payload),
          event.reconciles,
        ],
      );
      const found = rows[0];
      if (!found)
        throw new StoreError('outbound_event_missing', 'the outbound event was not recorded');
      const { begun, ...row } = found;
      return { row, begun };
    },

    async beginAttempt(id: string, attemptsRead: number) {
      const { rows } = await q.query<OutboundEventRecord>(
        `update outbound_events set state = 'delivering', attempts = attempts + 1, updated_at = now()
         where id = $1::uuid and state in ('pending', 'delivering') and attempts = $2
         returning ${COLUMNS}`,
        [id, attemptsRead],
      );
      return rows[0];
    },

    async delivered(
      id: string,
      receipt: StoredReceipt,
      defer?: (stored: StoredReceipt) => void,
    ): Promise<void> {
      if (defer) {
        defer(receipt);
        return;
      }
      await one(
        q,
        `update outbound_events set state = 'delivered', external_id = $2, link = $3,
           result = $4::jsonb, last_error = null, updated_at = now() where id = $1::uuid`,
        [
          id,
          receipt.externalId,
          receipt.link,
          receipt.result === null ? null : JSON.stringify(receipt.result),
        ],
      );
    },

    async retryLater(id: string, error: string): Promise<void> {
      await one(
        q,
        `update outbound_events set state = 'pending', last_error = $2, updated_at = now()
         where id = $1::uuid`,
        [id, clip(error)],
      );
    },

    async failed(id: string, error: string): Promise<void> {
      await one(
        q,
        `update outbound_events set state = 'failed', last_error = $2, updated_at = now()
         where id = $1::uuid`,
        [id, clip(error)],
      );
    },

    async unknown(id: string, error: string): Promise<void> {
      await one(
        q,
        `update outbound_events set state = 'unknown', last_error = $2, updated_at = now()
         where id = $1::uuid`,
        [id, clip(error)],
      );
    },

    async forRun(runId: string): Promise<readonly OutboundEventRecord[]> {
      const { rows } = await q.query<OutboundEventRecord>(
        `select ${COLUMNS} from outbound_events where run_id = $1::uuid order by created_at, id`,
        [runId],
      );
      return rows;
    },
  });
}

/**
 * Marks delivered the effects a call's end was to settle, without the run's lease: what the
 * provider answered is true whoever holds the run (decision 0023), so a call stopped after its
 * delivery, or whose end could not be written, still says so. Only rows still `delivering` change.
 */
export async function settleDelivered(
  q: Queryable,
  effects: readonly DeliveredEffect[],
): Promise<void> {
  if (effects.length === 0) return;
  await q.query(markDelivered('$1'), [JSON.stringify(effects)]);
}

/**
 * The statement that marks delivered the `delivering` events a JSON array of
 * {@link DeliveredEffect} names (`param`); `also` narrows it further (a run, a lease's reservation).
 */
export function markDelivered(param: string, also = ''): string {
  return `update outbound_events o set state = 'delivered', external_id = d."externalId",
         link = d.link, result = d.result, last_error = null, updated_at = now()
       from jsonb_to_recordset(${param}::jsonb)
         as d (id uuid, "externalId" text, link text, result jsonb)
       where o.id = d.id and o.state = 'delivering'${also}`;
}

/** What a reply's outbound event records: the reply step, and the message it wrote. */
export interface DeliveredReply {
  readonly runId: string;
  readonly stepSeq: number;
  readonly conversationId: string;
  readonly messageId: string;
  readonly characters: number;
}

/** SQL expressions for the parts of a reply's outbound event ({@link deliveredReplyInsert}). */
export interface ReplyEventSql {
  readonly id: string;
  readonly run: string;
  readonly seq: string;
  readonly conversation: string;
  readonly message: string;
  readonly characters: string;
  /** What the values are selected from, when they come from a row (`from reserved`). */
  readonly from?: string;
}

/**
 * The insert of a run's reply as its outbound event: the conversation is the channel every face
 * reads (the API, the CLI, the web UI), so the write is the delivery and the row is `delivered` at
 * once, one attempt, with the message as its external id. Keyed like an effect, by (run, reply
 * step): the key is the one `effectKey(run, seq, 'reply', 'reply')` makes (the sha256 of the same
 * JSON array), computed by the statement, so a writer that learns the step number in the
 * statement keys it too. A second write finds the row. The body is not copied: it is the message's.
 */
export function deliveredReplyInsert(v: ReplyEventSql): string {
  return `insert into outbound_events
       (id, idempotency_key, run_id, step_seq, call_id, tool_name, kind, target, payload, state,
        attempts, external_id, reconciles)
     select ${v.id}::uuid,
       encode(sha256(convert_to('["mesh.outbound.v1","' || ${v.run}::text || '",' || ${v.seq}
         || ',"reply","reply"]', 'UTF8')), 'hex'),
       ${v.run}::uuid, ${v.seq}, 'reply', 'reply', 'reply', 'conversation ' || ${v.conversation},
       jsonb_build_object('messageId', ${v.message}, 'characters', ${v.characters}::integer),
       'delivered', 1, ${v.message}, true
     ${v.from ?? ''}
     on conflict (idempotency_key) do nothing`;
}

/** Records a run's reply as its outbound event, in the transaction that writes its message and step. */
export async function recordDeliveredReply(q: Queryable, reply: DeliveredReply): Promise<void> {
  await q.query(
    deliveredReplyInsert({
      id: '$1',
      run: '$2',
      seq: '$3::integer',
      conversation: '$4::text',
      message: '$5::text',
      characters: '$6',
    }),
    [
      randomUUID(),
      reply.runId,
      reply.stepSeq,
      reply.conversationId,
      reply.messageId,
      reply.characters,
    ],
  );
}

/** An outbound event with the agent whose run made it. */
export interface AgentOutboundEvent extends OutboundEventRecord {
  readonly agent: string;
}

/** Outbound events across agents (or one), newest first, optionally in one delivery state. */
export async function listOutboundEvents(
  q: Queryable,
  filter: { readonly agentId?: string; readonly state?: string; readonly limit: number },
): Promise<AgentOutboundEvent[]> {
  const { rows } = await q.query<AgentOutboundEvent>(
    `select ${COLUMNS.replace(/(^|,\s*)(\w)/g, '$1e.$2')}, a.name as agent
     from outbound_events e join runs r on r.id = e.run_id join agents a on a.id = r.agent_id
     where ($1::uuid is null or r.agent_id = $1) and ($2::text is null or e.state = $2)
     order by e.created_at desc, e.id limit $3`,
    [filter.agentId ?? null, filter.state ?? null, filter.limit],
  );
  return rows;
}
