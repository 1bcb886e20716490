import { backendRows, type BackendRow } from './backend-rows.ts';
import { isUniqueViolation, type Queryable } from './db.ts';

export type BrowserBackendKind = 'local' | 'cloudflare' | 'browserbase' | 'steel';

/** A registered browser backend. */
export type BrowserBackendRecord = BackendRow<BrowserBackendKind>;

/** One agent's grant of a browser backend. */
export interface BrowserGrantRecord {
  readonly agentId: string;
  readonly backendId: string;
  readonly allowLoopback: boolean;
  readonly grantedBy: string;
  readonly grantedAt: Date;
}

export type BrowserSessionState =
  'provisioning' | 'ready' | 'awaiting_human' | 'released' | 'failed';

/** One rented browser session of one run. */
export interface BrowserSessionRecord {
  readonly id: string;
  readonly runId: string;
  readonly agentId: string;
  readonly backendId: string;
  readonly externalId: string | null;
  readonly holder: string;
  readonly state: BrowserSessionState;
  readonly liveViewUrl: string | null;
  readonly recordingArtifactId: string | null;
  readonly createdAt: Date;
  readonly readyAt: Date | null;
  readonly releasedAt: Date | null;
  readonly releaseReason: string | null;
  /** Who acted in the session while it was handed to the conversation's people. */
  readonly takenOverBy: string | null;
  readonly handedBackAt: Date | null;
}

/** The states of a live browser session. */
export const LIVE = `('provisioning', 'ready', 'awaiting_human')`;
const GRANT = `agent_id as "agentId", backend_id as "backendId", allow_loopback as "allowLoopback",
  granted_by as "grantedBy", granted_at as "grantedAt"`;
function sessionColumns(t = ''): string {
  const p = t === '' ? '' : `${t}.`;
  return `${p}id, ${p}run_id as "runId", ${p}agent_id as "agentId", ${p}backend_id as "backendId",
  ${p}external_id as "externalId", ${p}holder, ${p}state, ${p}live_view_url as "liveViewUrl",
  ${p}recording_artifact_id as "recordingArtifactId",
  ${p}created_at as "createdAt", ${p}ready_at as "readyAt", ${p}released_at as "releasedAt",
  ${p}release_reason as "releaseReason", ${p}taken_over_by as "takenOverBy",
  ${p}handed_back_at as "handedBackAt"`;
}
const SESSION = sessionColumns();

const browserBackends = backendRows<BrowserBackendRecord>('browser_backends', 'a browser backend');
export const insertBrowserBackend = browserBackends.insert;
export const findBrowserBackend = browserBackends.find;
export const getBrowserBackend = browserBackends.get;
export const listBrowserBackends = browserBackends.list;
/** Deletes a backend (its grants and sessions go with it); false when there is none. */
export const deleteBrowserBackend = browserBackends.delete;

/** Grants an agent a browser backend, replacing an earlier grant. */
export async function upsertBrowserGrant(
  q: Queryable,
  g: Omit<BrowserGrantRecord, 'grantedAt'>,
): Promise<BrowserGrantRecord> {
  const { rows } = await q.query<BrowserGrantRecord>(
    `insert into agent_browser_backends (agent_id, backend_id, allow_loopback, granted_by)
     values ($1, $2, $3, $4)
     on conflict (agent_id) do update set backend_id = excluded.backend_id,
       allow_loopback = excluded.allow_loopback, granted_by = excluded.granted_by,
       granted_at = now()
     returning ${GRANT}`,
    [g.agentId, g.backendId, g.allowLoopback, g.grantedBy],
  );
  return rows[0] as BrowserGrantRecord;
}

export async function deleteBrowserGrant(q: Queryable, agentId: string): Promise<boolean> {
  const { rows } = await q.query<{ agentId: string }>(
    `delete from agent_browser_backends where agent_id = $1 returning agent_id as "agentId"`,
    [agentId],
  );
  return rows.length > 0;
}

/** The agent's browser grant and its backend, or undefined when it has none. */
export async function browserGrantOf(
  q: Queryable,
  agentId: string,
): Promise<{ grant: BrowserGrantRecord; backend: BrowserBackendRecord } | undefined> {
  const { rows } = await q.query<BrowserGrantRecord & { backend: BrowserBackendRecord }>(
    `select g.agent_id as "agentId", g.backend_id as "backendId",
       g.allow_loopback as "allowLoopback", g.granted_by as "grantedBy",
       g.granted_at as "grantedAt",
       json_build_object('id', b.id, 'name', b.name, 'kind', b.kind, 'development', b.development,
         'settings', b.settings, 'createdAt', b.created_at) as backend
     from agent_browser_backends g join browser_backends b on b.id = g.backend_id
     where g.agent_id = $1`,
    [agentId],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { backend, ...grant } = row;
  return { grant, backend: { ...backend, createdAt: new Date(backend.createdAt) } };
}

export async function listBrowserGrants(
  q: Queryable,
): Promise<(BrowserGrantRecord & { agentName: string; backendName: string })[]> {
  const { rows } = await q.query<BrowserGrantRecord & { agentName: string; backendName: string }>(
    `select g.agent_id as "agentId", g.backend_id as "backendId",
       g.allow_loopback as "allowLoopback", g.granted_by as "grantedBy",
       g.granted_at as "grantedAt", a.name as "agentName", b.name as "backendName"
     from agent_browser_backends g
     join agents a on a.id = g.agent_id join browser_backends b on b.id = g.backend_id
     order by a.name`,
  );
  return rows;
}

/**
 * Records a session being provisioned for a run; undefined when the run already has a live one
 * (another call or process won the race).
 */
export async function insertBrowserSession(
  q: Queryable,
  s: { id: string; runId: string; agentId: string; backendId: string; holder: string },
): Promise<BrowserSessionRecord | undefined> {
  try {
    const { rows } = await q.query<BrowserSessionRecord>(
      `insert into browser_sessions (id, run_id, agent_id, backend_id, holder, state)
       values ($1, $2, $3, $4, $5, 'provisioning') returning ${SESSION}`,
      [s.id, s.runId, s.agentId, s.backendId, s.holder],
    );
    return rows[0];
  } catch (error) {
    if (isUniqueViolation(error)) return undefined;
    throw error;
  }
}

export async function markBrowserSessionReady(
  q: Queryable,
  id: string,
  externalId: string,
  liveViewUrl: string | null,
): Promise<BrowserSessionRecord | undefined> {
  const { rows } = await q.query<BrowserSessionRecord>(
    `update browser_sessions set state = 'ready', external_id = $2, live_view_url = $3,
       ready_at = now()
     where id = $1 and state = 'provisioning' returning ${SESSION}`,
    [id, externalId, liveViewUrl],
  );
  return rows[0];
}

/** Ends a session's row: released (or failed, when provisioning did). */
export async function markBrowserSessionEnded(
  q: Queryable,
  id: string,
  state: 'released' | 'failed',
  reason: string,
): Promise<void> {
  await q.query(
    `update browser_sessions set state = $2, release_reason = $3, released_at = now()
     where id = $1 and state in ${LIVE}`,
    [id, state, reason],
  );
}

/** Links a released session to its recording, stored as an artifact of its run. */
export async function setBrowserSessionRecording(
  q: Queryable,
  id: string,
  artifactId: string,
): Promise<void> {
  await q.query(`update browser_sessions set recording_artifact_id = $2 where id = $1`, [
    id,
    artifactId,
  ]);
}

/** Every session of a run, oldest first: what the run view shows of its browsing. */
export async function browserSessionsOfRun(
  q: Queryable,
  runId: string,
): Promise<BrowserSessionRecord[]> {
  const { rows } = await q.query<BrowserSessionRecord>(
    `select ${SESSION} from browser_sessions where run_id = $1 order by created_at`,
    [runId],
  );
  return rows;
}

export async function liveBrowserSessionOfRun(
  q: Queryable,
  runId: string,
): Promise<BrowserSessionRecord | undefined> {
  const { rows } = await q.query<BrowserSessionRecord>(
    `select ${SESSION} from browser_sessions where run_id = $1 and state in ${LIVE}`,
    [runId],
  );
  return rows[0];
}

/**
 * The session time the run has used, in ms: every session of it, from ready (or its start) to
 * release, or to now for a live one.
 */
export async function runSessionMs(q: Queryable, runId: string): Promise<number> {
  const { rows } = await q.query<{ ms: number | null }>(
    `select sum(extract(epoch from (coalesce(released_at, now()) - coalesce(ready_at, created_at))) * 1000)::float8 as ms
     from browser_sessions where run_id = $1 and state <> 'failed'`,
    [runId],
  );
  return Math.max(0, rows[0]?.ms ?? 0);
}

/** Live sessions with their run's status, agent and backend, newest first. */
export async function listLiveBrowserSessions(q: Queryable): Promise<
  (BrowserSessionRecord & {
    agentName: string;
    backendName: string;
    backendKind: string;
    runStatus: string;
  })[]
> {
  const { rows } = await q.query<
    BrowserSessionRecord & {
      agentName: string;
      backendName: string;
      backendKind: string;
      runStatus: string;
    }
  >(
    `select ${sessionColumns('s')}, a.name as "agentName", b.name as "backendName",
       b.kind as "backendKind", r.status as "runStatus"
     from browser_sessions s join agents a on a.id = s.agent_id
     join browser_backends b on b.id = s.backend_id join runs r on r.id = s.run_id
     where s.state in ${LIVE} order by s.created_at desc`,
  );
  return rows;
}

/**
 * Live sessions whose run died: the run ended, or its lease ran out more than `graceMs` ago
 * (the process that drove the session is gone). A run parked on a question keeps its session:
 * a person may be using it (the handoff).
 */
export async function orphanedBrowserSessions(
  q: Queryable,
  graceMs: number,
): Promise<BrowserSessionRecord[]> {
  const { rows } = await q.query<BrowserSessionRecord>(
    `select ${sessionColumns('s')} from browser_sessions s join runs r on r.id = s.run_id
     where s.state in ${LIVE}
       and r.status <> 'awaiting_input'
       and (r.status not in ('queued', 'running')
         or r.lease_owner is distinct from s.holder
         or r.lease_expires_at is null
         or r.lease_expires_at < now() - ($1::float8 * interval '1 millisecond'))`,
    [graceMs],
  );
  return rows;
}

/**
 * Attributes a handed-over session's takeover to the first actor who acted in it; false when the
 * session is not waiting for a person (the agent has it, or it ended).
 */
export async function markBrowserSessionTakenOver(
  q: Queryable,
  id: string,
  actor: string,
): Promise<boolean> {
  const { rows } = await q.query(
    `update browser_sessions set taken_over_by = coalesce(taken_over_by, $2)
     where id = $1 and state = 'awaiting_human' returning id`,
    [id, actor],
  );
  return rows.length > 0;
}

export async function getBrowserSession(
  q: Queryable,
  id: string,
): Promise<BrowserSessionRecord | undefined> {
  const { rows } = await q.query<BrowserSessionRecord>(
    `select ${SESSION} from browser_sessions where id::text = $1`,
    [id],
  );
  return rows[0];
}

/** Gives a live session to the run's new holder (the lease that resumed the run). */
export async function setBrowserSessionHolder(
  q: Queryable,
  id: string,
  holder: string,
): Promise<BrowserSessionRecord | undefined> {
  const { rows } = await q.query<BrowserSessionRecord>(
    `update browser_sessions set holder = $2 where id = $1 and state in ${LIVE} returning ${SESSION}`,
    [id, holder],
  );
  return rows[0];
}

/** Whether `actor` has spoken in the conversation of the session's run (a participant of it). */
export async function isSessionParticipant(
  q: Queryable,
  sessionId: string,
  actor: string,
): Promise<boolean> {
  const { rows } = await q.query(
    `select 1 from browser_sessions s join runs r on r.id = s.run_id
       join messages m on m.conversation_id = r.conversation_id
     where s.id = $1 and m.direction = 'inbound' and m.actor = $2 limit 1`,
    [sessionId, actor],
  );
  return rows.length > 0;
}
