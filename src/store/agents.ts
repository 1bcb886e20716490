import type { JsonObject } from '../model/json.ts';
import type { AgentRecord } from '../run/records.ts';
import { isUniqueViolation, StoreError, type Queryable } from './db.ts';

const COLUMNS = `id, name, persona, model_provider_id as "modelProviderId", model,
  model_image_input as "modelImageInput", budget, created_at as "createdAt"`;

/** Agent names are what operators type; they stay short and shell-friendly. */
export const AGENT_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export async function insertAgent(
  q: Queryable,
  agent: {
    id: string;
    name: string;
    persona?: string | null;
    modelProviderId?: string | null;
    model?: string | null;
    modelImageInput?: boolean;
  },
): Promise<AgentRecord> {
  if (!AGENT_NAME_PATTERN.test(agent.name)) {
    throw new StoreError(
      'invalid_agent_name',
      'an agent name is 1-63 lowercase letters, digits, "-" or "_"',
    );
  }
  try {
    const { rows } = await q.query<AgentRecord>(
      `insert into agents (id, name, persona, model_provider_id, model, model_image_input)
       values ($1, $2, $3, $4, $5, $6) returning ${COLUMNS}`,
      [
        agent.id,
        agent.name,
        agent.persona ?? null,
        agent.modelProviderId ?? null,
        agent.model ?? null,
        agent.modelImageInput ?? false,
      ],
    );
    return rows[0] as AgentRecord;
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new StoreError('agent_exists', `an agent named ${agent.name} already exists`);
    }
    throw error;
  }
}

export async function findAgent(q: Queryable, nameOrId: string): Promise<AgentRecord | undefined> {
  const { rows } = await q.query<AgentRecord>(
    `select ${COLUMNS} from agents where name = $1 or id::text = $1 limit 1`,
    [nameOrId],
  );
  return rows[0];
}

export async function listAgents(q: Queryable): Promise<AgentRecord[]> {
  const { rows } = await q.query<AgentRecord>(`select ${COLUMNS} from agents order by name`);
  return rows;
}

/** Says whether the agent's model accepts image input; undefined when there is no such agent. */
export async function setModelImageInput(
  q: Queryable,
  id: string,
  accepts: boolean,
): Promise<AgentRecord | undefined> {
  const { rows } = await q.query<AgentRecord>(
    `update agents set model_image_input = $2 where id = $1 returning ${COLUMNS}`,
    [id, accepts],
  );
  return rows[0];
}

export async function getAgent(q: Queryable, id: string): Promise<AgentRecord | undefined> {
  const { rows } = await q.query<AgentRecord>(`select ${COLUMNS} from agents where id = $1`, [id]);
  return rows[0];
}

/** How many of the agent's runs are queued, running or waiting: work a deletion would cut off. */
export async function countUnfinishedRuns(q: Queryable, agentId: string): Promise<number> {
  const { rows } = await q.query<{ n: number }>(
    `select count(*)::int as n from runs
      where agent_id = $1 and status in ('queued', 'running', 'awaiting_input')`,
    [agentId],
  );
  return rows[0]?.n ?? 0;
}

/**
 * Deletes an agent and, through the schema's cascades, everything that is its own: its
 * conversations and messages, runs with their steps and artifacts, memories, tool policy and
 * remote bindings. Its secrets are not rows of these tables; the caller retires them in the same
 * transaction.
 */
export async function deleteAgentRow(q: Queryable, agentId: string): Promise<boolean> {
  const { rowCount } = await q.query(`delete from agents where id = $1`, [agentId]);
  return rowCount > 0;
}

/** What an update changes of an agent: a field left out stays as it is. */
export interface AgentChanges {
  readonly persona?: string | null;
  readonly modelProviderId?: string | null;
  readonly model?: string | null;
  readonly modelImageInput?: boolean;
}

/** Changes an agent's persona, model and image input; undefined when there is no such agent. */
export async function updateAgentRow(
  q: Queryable,
  id: string,
  changes: AgentChanges,
): Promise<AgentRecord | undefined> {
  const has = (k: keyof AgentChanges) => Object.hasOwn(changes, k) && changes[k] !== undefined;
  const { rows } = await q.query<AgentRecord>(
    `update agents set
       persona = case when $2 then $3 else persona end,
       model_provider_id = case when $4 then $5::uuid else model_provider_id end,
       model = case when $6 then $7 else model end,
       model_image_input = case when $8 then $9 else model_image_input end
     where id = $1 returning ${COLUMNS}`,
    [
      id,
      has('persona'),
      changes.persona ?? null,
      has('modelProviderId'),
      changes.modelProviderId ?? null,
      has('model'),
      changes.model ?? null,
      has('modelImageInput'),
      changes.modelImageInput ?? false,
    ],
  );
  return rows[0];
}

/** Replaces an agent's budget profile; undefined when there is no such agent. */
export async function setAgentBudgetRow(
  q: Queryable,
  id: string,
  budget: JsonObject,
): Promise<AgentRecord | undefined> {
  const { rows } = await q.query<AgentRecord>(
    `update agents set budget = $2::jsonb where id = $1 returning ${COLUMNS}`,
    [id, JSON.stringify(budget)],
  );
  return rows[0];
}
