import { backendRows, type BackendRow } from './backend-rows.ts';
import { isUniqueViolation, type Queryable } from './db.ts';

/** The states of a live workspace. */
export const LIVE_WORKSPACE = `('provisioning', 'ready')`;

/** A registered execution backend. */
export type ExecutionBackendRecord = BackendRow<'local' | 'e2b'>;

/** One agent's grant of a backend, with its workspaces' egress allowlist. */
export interface BackendGrantRecord {
  readonly agentId: string;
  readonly backendId: string;
  readonly egress: readonly string[];
  readonly grantedBy: string;
  readonly grantedAt: Date;
}

export type WorkspaceState = 'provisioning' | 'ready' | 'released' | 'failed';

/** One rented workspace of one run. */
export interface WorkspaceRecord {
  readonly id: string;
  readonly runId: string;
  readonly agentId: string;
  readonly backendId: string;
  readonly externalId: string | null;
  readonly holder: string;
  readonly state: WorkspaceState;
  readonly computeMs: number;
  readonly createdAt: Date;
  readonly releasedAt: Date | null;
  readonly releaseReason: string | null;
}

const GRANT = `agent_id as "agentId", backend_id as "backendId", egress, granted_by as "grantedBy",
  granted_at as "grantedAt"`;
/** A workspace row's columns, of the table or of an alias of it. */
function workspaceColumns(t = ''): string {
  const p = t === '' ? '' : `${t}.`;
  return `${p}id, ${p}run_id as "runId", ${p}agent_id as "agentId", ${p}backend_id as "backendId",
  ${p}external_id as "externalId", ${p}holder, ${p}state, ${p}compute_ms::float8 as "computeMs",
  ${p}created_at as "createdAt", ${p}released_at as "releasedAt",
  ${p}release_reason as "releaseReason"`;
}
const WORKSPACE = workspaceColumns();

const executionBackends = backendRows<ExecutionBackendRecord>(
  'execution_backends',
  'an execution backend',
);
export const insertExecutionBackend = executionBackends.insert;
export const findExecutionBackend = executionBackends.find;
export const getExecutionBackend = executionBackends.get;
export const listExecutionBackends = executionBackends.list;
/** Deletes a backend (its grants go with it); false when there is none. */
export const deleteExecutionBackend = executionBackends.delete;

/** Grants an agent a backend (replacing an earlier grant) with an egress allowlist. */
export async function upsertBackendGrant(
  q: Queryable,
  g: Omit<BackendGrantRecord, 'grantedAt'>,
): Promise<BackendGrantRecord> {
  const { rows } = await q.query<BackendGrantRecord>(
    `insert into agent_execution_backends (agent_id, backend_id, egress, granted_by)
     values ($1, $2, $3::jsonb, $4)
     on conflict (agent_id) do update set backend_id = excluded.backend_id,
       egress = excluded.egress, granted_by = excluded.granted_by, granted_at = now()
     returning ${GRANT}`,
    [g.agentId, g.backendId, JSON.stringify(g.egress), g.grantedBy],
  );
  return rows[0] as BackendGrantRecord;
}

export async function deleteBackendGrant(q: Queryable, agentId: string): Promise<boolean> {
  const { rows } = await q.query<{ agentId: string }>(
    `delete from agent_execution_backends where agent_id = $1 returning agent_id as "agentId"`,
    [agentId],
  );
  return rows.length > 0;
}

/** The agent's grant and its backend, or undefined when it has none. */
export async function backendGrantOf(
  q: Queryable,
  agentId: string,
): Promise<{ grant: BackendGrantRecord; backend: ExecutionBackendRecord } | undefined> {
  const { rows } = await q.query<BackendGrantRecord & { backend: ExecutionBackendRecord }>(
    `select g.agent_id as "agentId", g.backend_id as "backendId", g.egress,
       g.granted_by as "grantedBy", g.granted_at as "grantedAt",
       json_build_object('id', b.id, 'name', b.name, 'kind', b.kind, 'development', b.development,
         'settings', b.settings, 'createdAt', b.created_at) as backend
     from agent_execution_backends g join execution_backends b on b.id = g.backend_id
     where g.agent_id = $1`,
    [agentId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { backend, ...grant } = row;
  return { grant, backend: { ...backend, createdAt: new Date(backend.createdAt) } };
}

export async function listBackendGrants(
  q: Queryable,
): Promise<(BackendGrantRecord & { agentName: string; backendName: string })[]> {
  const { rows } = await q.query<BackendGrantRecord & { agentName: string; backendName: string }>(
    `select g.agent_id as "agentId", g.backend_id as "backendId", g.egress,
       g.granted_by as "grantedBy", g.granted_at as "grantedAt",
       a.name as "agentName", b.name as "backendName"
     from agent_execution_backends g
     join agents a on a.id = g.agent_id join execution_backends b on b.id = g.backend_id
     order by a.name`,
  );
  return rows;
}

/**
 * Records a workspace being provisioned for a run; undefined when the run already has a live
 * one (another call or process won the race: use that one).
 */
export async function insertWorkspace(
  q: Queryable,
  w: { id: string; runId: string; agentId: string; backendId: string; holder: string },
): Promise<WorkspaceRecord | undefined> {
  try {
    const { rows } = await q.query<WorkspaceRecord>(
      `insert into workspaces (id, run_id, agent_id, backend_id, holder, state)
       values ($1, $2, $3, $4, $5, 'provisioning') returning ${WORKSPACE}`,
      [w.id, w.runId, w.agentId, w.backendId, w.holder],
    );
    return rows[0];
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

export async function markWorkspaceReady(
  q: Queryable,
  id: string,
  externalId: string,
): Promise<void> {
  await q.query(
    `update workspaces set state = 'ready', external_id = $2 where id = $1 and state = 'provisioning'`,
    [id, externalId],
  );
}

/** Ends a workspace's row: released (or failed, when provisioning did). */
export async function markWorkspaceEnded(
  q: Queryable,
  id: string,
  state: 'released' | 'failed',
  reason: string,
): Promise<void> {
  await q.query(
    `update workspaces set state = $2, release_reason = $3, released_at = now()
     where id = $1 and state in ('provisioning', 'ready')`,
    [id, state, reason],
  );
}

export async function addWorkspaceCompute(q: Queryable, id: string, ms: number): Promise<void> {
  await q.query(`update workspaces set compute_ms = compute_ms + $2 where id = $1`, [
    id,
    Math.max(0, Math.round(ms)),
  ]);
}

export async function liveWorkspaceOfRun(
  q: Queryable,
  runId: string,
): Promise<WorkspaceRecord | undefined> {
  const { rows } = await q.query<WorkspaceRecord>(
    `select ${WORKSPACE} from workspaces where run_id = $1 and state in ${LIVE_WORKSPACE}`,
    [runId],
  );
  return rows[0];
}

/** Compute the run's workspaces were metered, in ms (all of them: released ones count too). */
export async function runComputeMs(q: Queryable, runId: string): Promise<number> {
  const { rows } = await q.query<{ ms: number | null }>(
    `select sum(compute_ms)::float8 as ms from workspaces where run_id = $1`,
    [runId],
  );
  return rows[0]?.ms ?? 0;
}

/** Live workspaces with their run's status, agent and backend, newest first. */
export async function listLiveWorkspaces(q: Queryable): Promise<
  (WorkspaceRecord & {
    agentName: string;
    backendName: string;
    backendKind: string;
    runStatus: string;
  })[]
> {
  const { rows } = await q.query<
    WorkspaceRecord & {
      agentName: string;
      backendName: string;
      backendKind: string;
      runStatus: string;
    }
  >(
    `select ${workspaceColumns('w')}, a.name as "agentName", b.name as "backendName",
       b.kind as "backendKind", r.status as "runStatus"
     from workspaces w join agents a on a.id = w.agent_id
     join execution_backends b on b.id = w.backend_id join runs r on r.id = w.run_id
     where w.state in ('provisioning', 'ready') order by w.created_at desc`,
  );
  return rows;
}

/**
 * Live workspaces whose run died: the run ended, or its lease ran out more than `graceMs` ago
 * (the process that rented the workspace is gone; a resumed run rents a new one).
 */
export async function orphanedWorkspaces(
  q: Queryable,
  graceMs: number,
): Promise<WorkspaceRecord[]> {
  const { rows } = await q.query<WorkspaceRecord>(
    `select ${workspaceColumns('w')} from workspaces w join runs r on r.id = w.run_id
     where w.state in ('provisioning', 'ready')
       and (r.status not in ('queued', 'running')
         or r.lease_owner is distinct from w.holder
         or r.lease_expires_at is null
         or r.lease_expires_at < now() - ($1::float8 * interval '1 millisecond'))`,
    [graceMs],
  );
  return rows;
}
