import type { JsonObject } from '../model/json.ts';
import { hasCode } from '../tool/errors.ts';
import { StoreError, type Db, type Queryable } from './db.ts';

export type MemoryStatus = 'active' | 'superseded' | 'forgotten';

export interface MemoryRow {
  readonly id: string;
  readonly agentId: string;
  readonly content: string;
  readonly status: MemoryStatus;
  readonly supersedes: string | null;
  readonly supersededBy: string | null;
  readonly forgottenReason: string | null;
  readonly provenance: JsonObject;
  readonly sourceMessageId: string | null;
  readonly runId: string | null;
  readonly callId: string | null;
  readonly createdAt: Date;
  readonly retiredAt: Date | null;
}

const COLUMNS = `id, agent_id as "agentId", content, status, supersedes, superseded_by as "supersededBy",
  forgotten_reason as "forgottenReason", provenance, source_message_id as "sourceMessageId", run_id as "runId",
  call_id as "callId", created_at as "createdAt", retired_at as "retiredAt"`;

/** Who wrote a memory and through which call: derived from persisted records only. */
export interface MemoryWrite {
  readonly agentId: string;
  readonly provenance: JsonObject;
  readonly sourceMessageId: string | null;
  readonly runId: string | null;
  readonly callId: string | null;
}

async function byCall(
  q: Queryable,
  write: Pick<MemoryWrite, 'runId' | 'callId'>,
): Promise<MemoryRow | undefined> {
  if (write.runId === null || write.callId === null) return undefined;
  const { rows } = await q.query<MemoryRow>(
    `select ${COLUMNS} from memories where run_id = $1 and call_id = $2`,
    [write.runId, write.callId],
  );
  return rows[0];
}

async function insert(
  q: Queryable,
  id: string,
  write: MemoryWrite,
  content: string,
  supersedes: string | null,
): Promise<MemoryRow> {
  const { rows } = await q.query<MemoryRow>(
    `insert into memories (id, agent_id, content, supersedes, provenance, source_message_id, run_id, call_id)
     values ($1, $2, $3, $4, $5::jsonb, $6, $7, $8) returning ${COLUMNS}`,
    [
      id,
      write.agentId,
      content,
      supersedes,
      JSON.stringify(write.provenance),
      write.sourceMessageId,
      write.runId,
      write.callId,
    ],
  );
  return rows[0] as MemoryRow;
}

/** Creates a memory; the same call writing twice (a resumed run) gets its first write back. */
export async function rememberMemory(
  db: Db,
  id: string,
  write: MemoryWrite,
  content: string,
): Promise<MemoryRow> {
  return db.transaction(
    async (tx) => (await byCall(tx, write)) ?? insert(tx, id, write, content, null),
  );
}

/** The call a memory is written through: the run's provenance is read by the write itself. */
export interface MemoryCallRef {
  readonly agentId: string;
  readonly runId: string;
  readonly callId: string;
}

/**
 * Creates a memory through a run's call in one statement (one round trip, one commit): its
 * provenance and source message are the run's own, read by the insert, never anything the model
 * sent. The same call writing again (a resumed run) gets its first write back. Undefined when the
 * run is not the agent's.
 */
export async function rememberForCall(
  q: Queryable,
  id: string,
  call: MemoryCallRef,
  content: string,
): Promise<MemoryRow | undefined> {
  const { rows } = await q.query<MemoryRow>(
    `with written as (
       insert into memories (id, agent_id, content, provenance, source_message_id, run_id, call_id)
       select $1, r.agent_id, $3, r.provenance, r.inbound_message_id, r.id, $5
       from runs r where r.id = $4 and r.agent_id = $2
       on conflict (run_id, call_id) do nothing
       returning ${COLUMNS})
     select * from written
     union all
     select ${COLUMNS} from memories
     where run_id = $4 and call_id = $5 and agent_id = $2 and not exists (select 1 from written)`,
    [id, call.agentId, content, call.runId, call.callId],
  );
  // Nothing written and nothing found: the run is not the agent's, or the same call wrote it in
  // a transaction that committed after this statement began (a second holder; the lease fences
  // that one's step). Either way a read now says which.
  return rows[0] ?? (await byCall(q, call));
}

/** Why a supersede or retire could not happen. */
export class MemoryNotActiveError extends StoreError {
  static readonly code = 'memory_not_active';
  constructor() {
    super(MemoryNotActiveError.code, 'no active memory of this agent has that id');
  }
}

/** True when `error` says the memory was not an active memory of the agent. */
export function hasMemoryCode(error: unknown): boolean {
  return hasCode(error, MemoryNotActiveError.code);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

async function lockActive(tx: Queryable, agentId: string, memoryId: string): Promise<MemoryRow> {
  if (!UUID.test(memoryId)) throw new MemoryNotActiveError();
  const { rows } = await tx.query<MemoryRow>(
    `select ${COLUMNS} from memories where id = $1 and agent_id = $2 and status = 'active' for update`,
    [memoryId, agentId],
  );
  const row = rows[0];
  if (!row) throw new MemoryNotActiveError();
  return row;
}

/** Supersedes an active memory with new content, keeping the chain. Idempotent per call. */
export async function amendMemory(
  db: Db,
  id: string,
  write: MemoryWrite,
  memoryId: string,
  content: string,
): Promise<{ memory: MemoryRow; superseded: MemoryRow }> {
  return db.transaction(async (tx) => {
    const earlier = await byCall(tx, write);
    if (earlier && earlier.supersedes) {
      const { rows } = await tx.query<MemoryRow>(`select ${COLUMNS} from memories where id = $1`, [
        earlier.supersedes,
      ]);
      return { memory: earlier, superseded: rows[0] as MemoryRow };
    }
    await lockActive(tx, write.agentId, memoryId);
    const memory = await insert(tx, id, write, content, memoryId);
    const { rows } = await tx.query<MemoryRow>(
      `update memories set status = 'superseded', superseded_by = $2, retired_at = now(), retired_by = $3::jsonb,
         retired_by_call = $4 where id = $1 returning ${COLUMNS}`,
      [
        memoryId,
        memory.id,
        JSON.stringify(write.provenance),
        `${write.runId ?? ''}/${write.callId ?? ''}`,
      ],
    );
    return { memory, superseded: rows[0] as MemoryRow };
  });
}

/** Retires an active memory with a reason. Retiring it again through the same call is a no-op. */
export async function forgetMemory(
  db: Db,
  write: MemoryWrite,
  memoryId: string,
  reason: string,
): Promise<MemoryRow> {
  return db.transaction(async (tx) => {
    const { rows: done } = await tx.query<MemoryRow>(
      `select ${COLUMNS} from memories where id = $1 and agent_id = $2 and status = 'forgotten'
         and retired_by_call = $3`,
      [memoryId, write.agentId, `${write.runId ?? ''}/${write.callId ?? ''}`],
    );
    if (done[0] && write.callId !== null) return done[0];
    await lockActive(tx, write.agentId, memoryId);
    const { rows } = await tx.query<MemoryRow>(
      `update memories set status = 'forgotten', forgotten_reason = $2, retired_at = now(),
         retired_by = $3::jsonb, retired_by_call = $4
       where id = $1 returning ${COLUMNS}`,
      [
        memoryId,
        reason,
        JSON.stringify(write.provenance),
        `${write.runId ?? ''}/${write.callId ?? ''}`,
      ],
    );
    return rows[0] as MemoryRow;
  });
}

/** Full-text search over an agent's active memories, best match first. */
export async function searchMemories(
  q: Queryable,
  agentId: string,
  query: string,
  limit: number,
): Promise<MemoryRow[]> {
  const { rows } = await q.query<MemoryRow>(
    `select ${COLUMNS} from memories, websearch_to_tsquery('english', $2) as tsq
     where agent_id = $1 and status = 'active' and (search @@ tsq or $2 = '')
     order by ts_rank(search, tsq) desc, created_at desc
     limit $3`,
    [agentId, query, limit],
  );
  return rows;
}

/** An agent's memories in every state (or in `status`), newest first (for operators). */
export async function listMemories(
  q: Queryable,
  agentId: string,
  limit = 100,
  status?: MemoryStatus,
): Promise<MemoryRow[]> {
  const { rows } = await q.query<MemoryRow>(
    `select ${COLUMNS} from memories where agent_id = $1 and ($3::text is null or status = $3)
     order by created_at desc limit $2`,
    [agentId, limit, status ?? null],
  );
  return rows;
}

/** An agent's newest active memories, for the memory section of its prompt. */
export async function recentActiveMemories(
  q: Queryable,
  agentId: string,
  limit: number,
): Promise<MemoryRow[]> {
  const { rows } = await q.query<MemoryRow>(
    `select ${COLUMNS} from memories where agent_id = $1 and status = 'active' order by created_at desc limit $2`,
    [agentId, limit],
  );
  return rows;
}
