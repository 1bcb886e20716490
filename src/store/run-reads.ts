import type { RunRecord, RunStatus, StepRecord } from '../run/records.ts';
import type { Queryable } from './db.ts';
import { RUN_COLUMNS } from './runs.ts';
import { STEP_COLUMNS, stepFrom, type StepRow } from './step-rows.ts';

/*
 * Reads of runs and their steps for whoever shows them: listings, lookups by a short id, a run's
 * steps. The ledger's writes are in runs.ts.
 */

/** Runs, newest first, of one agent and in one status when asked. */
export async function listRuns(
  q: Queryable,
  filter: { agentId?: string; status?: RunStatus; limit?: number; sinceHours?: number } = {},
): Promise<RunRecord[]> {
  const { rows } = await q.query<RunRecord>(
    `select ${RUN_COLUMNS} from runs
     where ($1::uuid is null or agent_id = $1) and ($2::text is null or status = $2)
       and ($4::integer is null or created_at >= now() - make_interval(hours => $4))
     order by created_at desc limit $3`,
    [filter.agentId ?? null, filter.status ?? null, filter.limit ?? 50, filter.sinceHours ?? null],
  );
  return rows;
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

/**
 * The runs whose id starts with `prefix` (lowercase hex and dashes, as a UUID is written), at most
 * `limit`: a range scan of the primary key, from the prefix padded with zeros to the prefix padded
 * with f's.
 */
export async function findRunsByPrefix(
  q: Queryable,
  prefix: string,
  limit: number,
): Promise<RunRecord[]> {
  const pad = (fill: string) => {
    const hex = prefix.replaceAll('-', '').padEnd(32, fill);
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
  const { rows } = await q.query<RunRecord>(
    `select ${RUN_COLUMNS} from runs where id between $1::uuid and $2::uuid order by created_at desc limit $3`,
    [pad('0'), pad('f'), limit],
  );
  return rows;
}

export async function listSteps(q: Queryable, runId: string): Promise<StepRecord[]> {
  const { rows } = await q.query<StepRow>(
    `select ${STEP_COLUMNS} from run_steps where run_id = $1 order by seq`,
    [runId],
  );
  return rows.map(stepFrom);
}

/** A run's steps numbered after `afterSeq`, in order: what a live reader has not seen yet. */
export async function listStepsAfter(
  q: Queryable,
  runId: string,
  afterSeq: number,
): Promise<StepRecord[]> {
  const { rows } = await q.query<StepRow>(
    `select ${STEP_COLUMNS} from run_steps where run_id = $1 and seq > $2::int order by seq`,
    [runId, afterSeq],
  );
  return rows.map(stepFrom);
}
