import type { Audience } from '../policy/audience.ts';
import type { ConversationRecord, MessageRecord } from '../run/records.ts';
import { StoreError, type Queryable } from './db.ts';

const CONVERSATION = `id, agent_id as "agentId", audience, title, created_at as "createdAt"`;
export const MESSAGE = `id, conversation_id as "conversationId", direction, actor, relayed_by as "relayedBy",
  body, created_at as "createdAt"`;

export async function insertConversation(
  q: Queryable,
  c: { id: string; agentId: string; audience: Audience; title?: string | null },
): Promise<ConversationRecord> {
  const { rows } = await q.query<ConversationRecord>(
    `insert into conversations (id, agent_id, audience, title) values ($1, $2, $3, $4) returning ${CONVERSATION}`,
    [c.id, c.agentId, c.audience, c.title ?? null],
  );
  return rows[0] as ConversationRecord;
}

export async function getConversation(
  q: Queryable,
  id: string,
): Promise<ConversationRecord | undefined> {
  const { rows } = await q.query<ConversationRecord>(
    `select ${CONVERSATION} from conversations where id::text = $1`,
    [id],
  );
  return rows[0];
}

export async function insertMessage(
  q: Queryable,
  m: {
    id: string;
    conversationId: string;
    direction: 'inbound' | 'outbound';
    actor: string;
    body: string;
    /** The credential's actor, when it posted for the named `actor` (a relay token). */
    relayedBy?: string | null;
  },
): Promise<MessageRecord> {
  if (m.body.length > 100_000)
    throw new StoreError('message_too_long', 'a message body is at most 100000 characters');
  const { rows } = await q.query<MessageRecord>(
    `insert into messages (id, conversation_id, direction, actor, body, relayed_by)
     values ($1, $2, $3, $4, $5, $6) returning ${MESSAGE}`,
    [m.id, m.conversationId, m.direction, m.actor, m.body, m.relayedBy ?? null],
  );
  return rows[0] as MessageRecord;
}

export async function getMessage(q: Queryable, id: string): Promise<MessageRecord | undefined> {
  const { rows } = await q.query<MessageRecord>(`select ${MESSAGE} from messages where id = $1`, [
    id,
  ]);
  return rows[0];
}

/** The conversation's messages before (not including) `beforeMessageId`, oldest first. */
export async function listMessagesBefore(
  q: Queryable,
  conversationId: string,
  beforeMessageId: string,
  limit = 200,
): Promise<MessageRecord[]> {
  const { rows } = await q.query<MessageRecord>(
    `select ${MESSAGE} from (
       select * from messages
       where conversation_id = $1
         and (created_at, id) < (select created_at, id from messages where id = $2)
       order by created_at desc, id desc
       limit $3) m
     order by created_at, id`,
    [conversationId, beforeMessageId, limit],
  );
  return rows;
}

export async function listMessages(q: Queryable, conversationId: string): Promise<MessageRecord[]> {
  const { rows } = await q.query<MessageRecord>(
    `select ${MESSAGE} from messages where conversation_id = $1 order by created_at, id`,
    [conversationId],
  );
  return rows;
}

/** An agent's conversations, newest first, with their message counts. */
export async function listConversations(
  q: Queryable,
  agentId: string,
  limit = 50,
): Promise<(ConversationRecord & { messages: number; lastMessageAt: Date | null })[]> {
  const { rows } = await q.query<
    ConversationRecord & { messages: number; lastMessageAt: Date | null }
  >(
    `select c.id, c.agent_id as "agentId", c.audience, c.title, c.created_at as "createdAt",
       count(m.id)::int as messages, max(m.created_at) as "lastMessageAt"
     from conversations c left join messages m on m.conversation_id = c.id
     where c.agent_id = $1
     group by c.id order by coalesce(max(m.created_at), c.created_at) desc limit $2`,
    [agentId, limit],
  );
  return rows;
}

/** A message that matched a search of an agent's own conversations. */
export interface MessageHit {
  readonly messageId: string;
  readonly conversationId: string;
  readonly conversationTitle: string | null;
  readonly audience: 'direct' | 'shared';
  readonly direction: 'inbound' | 'outbound';
  readonly actor: string;
  readonly createdAt: Date;
  /** The matching part of the message, matched words in **bold**. */
  readonly excerpt: string;
  readonly rank: number;
}

/**
 * Full-text search over one agent's messages, ranked, limited to what a turn in `from` may see:
 * from a shared conversation, the agent's shared conversations; from a direct conversation, also
 * that conversation and the agent's other direct conversations with the same person (every
 * inbound actor of it is one of this conversation's); with no conversation, shared ones only.
 * Never another agent's conversations, never someone else's direct messages.
 */
export async function searchAgentMessages(
  q: Queryable,
  s: {
    agentId: string;
    from: string | null;
    query: string;
    limit: number;
    /** The message the turn answers, which would always match its own words. */
    excludeMessageId: string | null;
  },
): Promise<MessageHit[]> {
  const { rows } = await q.query<MessageHit>(
    `with here as (select id, audience from conversations where id = $2 and agent_id = $1),
          person as (select distinct actor from messages
                     where conversation_id = (select id from here) and direction = 'inbound')
     select m.id as "messageId", m.conversation_id as "conversationId",
       c.title as "conversationTitle", c.audience, m.direction, m.actor,
       m.created_at as "createdAt",
       ts_headline('english', m.body, tsq,
         'MaxWords=40, MinWords=12, MaxFragments=2, StartSel=**, StopSel=**') as excerpt,
       ts_rank(m.search, tsq)::float8 as rank
     from messages m join conversations c on c.id = m.conversation_id,
       websearch_to_tsquery('english', $3) as tsq
     where c.agent_id = $1 and m.search @@ tsq and m.id is distinct from $5::uuid
       and (c.audience = 'shared' or c.id = (select id from here)
         or ((select audience from here) = 'direct' and c.audience = 'direct'
           and exists (select 1 from person)
           and exists (select 1 from messages o
                       where o.conversation_id = c.id and o.direction = 'inbound')
           and not exists (select 1 from messages o
                           where o.conversation_id = c.id and o.direction = 'inbound'
                             and o.actor not in (select actor from person))))
     order by rank desc, m.created_at desc
     limit $4`,
    [s.agentId, s.from, s.query, s.limit, s.excludeMessageId],
  );
  return rows;
}
