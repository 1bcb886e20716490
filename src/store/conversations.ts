import type { Audience } from '../policy/audience.ts';
import type { ConversationRecord, MessageRecord } from '../run/records.ts';
import { StoreError, type Queryable } from './db.ts';

const CONVERSATION = `id, agent_id as "agentId", audience, title, created_at as "createdAt"`;
const MESSAGE = `id, conversation_id as "conversationId", direction, actor, body, created_at as "createdAt"`;

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
  },
): Promise<MessageRecord> {
  if (m.body.length > 100_000)
    throw new StoreError('message_too_long', 'a message body is at most 100000 characters');
  const { rows } = await q.query<MessageRecord>(
    `insert into messages (id, conversation_id, direction, actor, body) values ($1, $2, $3, $4, $5) returning ${MESSAGE}`,
    [m.id, m.conversationId, m.direction, m.actor, m.body],
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
