import type { QueryProviderKind } from '../web/provider.ts';
import { isUniqueViolation, StoreError, type Queryable } from './db.ts';

/** A registered query provider: a `tool_providers` row of a web kind. */
export interface QueryProviderRecord {
  readonly id: string;
  readonly name: string;
  readonly kind: QueryProviderKind;
  /** The API root requests go to; nothing else is ever contacted. */
  readonly baseUrl: string;
  readonly allowLoopbackHttp: boolean;
  readonly requestTimeoutMs: number;
  /** How many calls (retries included) one run may make to this provider. */
  readonly maxCallsPerRun: number;
  readonly settings: Readonly<Record<string, string>>;
  readonly createdAt: Date;
}

/** One agent's grant of a query provider. */
export interface QueryGrantRecord {
  readonly agentId: string;
  readonly providerId: string;
  readonly grantedBy: string;
  readonly grantedAt: Date;
}

function columns(t = ''): string {
  const p = t === '' ? '' : `${t}.`;
  return `${p}id, ${p}slug as "name", ${p}kind, ${p}url as "baseUrl",
  ${p}allow_loopback_http as "allowLoopbackHttp", ${p}request_timeout_ms as "requestTimeoutMs",
  ${p}max_calls_per_run as "maxCallsPerRun", ${p}settings, ${p}created_at as "createdAt"`;
}
const PROVIDER = columns();

export async function insertQueryProvider(
  q: Queryable,
  p: Omit<QueryProviderRecord, 'createdAt'>,
): Promise<QueryProviderRecord> {
  try {
    const { rows } = await q.query<QueryProviderRecord>(
      `insert into tool_providers
         (id, slug, kind, url, allow_loopback_http, request_timeout_ms, max_calls_per_run, settings)
       values ($1, $2, $3, $4, $5, $6, $7, $8::jsonb) returning ${PROVIDER}`,
      [
        p.id,
        p.name,
        p.kind,
        p.baseUrl,
        p.allowLoopbackHttp,
        p.requestTimeoutMs,
        p.maxCallsPerRun,
        JSON.stringify(p.settings),
      ],
    );
    return rows[0] as QueryProviderRecord;
  } catch (error) {
    if (isUniqueViolation(error))
      throw new StoreError(
        'tool_provider_exists',
        `a tool provider named ${p.name} already exists`,
      );
    throw error;
  }
}

export async function findQueryProvider(
  q: Queryable,
  nameOrId: string,
): Promise<QueryProviderRecord | undefined> {
  const { rows } = await q.query<QueryProviderRecord>(
    `select ${PROVIDER} from tool_providers
     where kind <> 'mcp' and (slug = $1 or id::text = $1) limit 1`,
    [nameOrId],
  );
  return rows[0];
}

export async function listQueryProviders(q: Queryable): Promise<QueryProviderRecord[]> {
  const { rows } = await q.query<QueryProviderRecord>(
    `select ${PROVIDER} from tool_providers where kind <> 'mcp' order by slug`,
  );
  return rows;
}

/** Sets a provider's per-run call ceiling; undefined when there is no such provider. */
export async function setQueryProviderCeiling(
  q: Queryable,
  id: string,
  maxCallsPerRun: number,
): Promise<QueryProviderRecord | undefined> {
  const { rows } = await q.query<QueryProviderRecord>(
    `update tool_providers set max_calls_per_run = $2 where id = $1 and kind <> 'mcp'
     returning ${PROVIDER}`,
    [id, maxCallsPerRun],
  );
  return rows[0];
}

export async function deleteQueryProvider(q: Queryable, id: string): Promise<boolean> {
  const { rows } = await q.query<{ id: string }>(
    `delete from tool_providers where id = $1 and kind <> 'mcp' returning id`,
    [id],
  );
  return rows.length > 0;
}

/** Grants an agent a provider (kept as it was when it exists). */
export async function upsertQueryGrant(
  q: Queryable,
  g: { agentId: string; providerId: string; grantedBy: string },
): Promise<void> {
  await q.query(
    `insert into agent_query_providers (agent_id, provider_id, granted_by) values ($1, $2, $3)
     on conflict (agent_id, provider_id) do nothing`,
    [g.agentId, g.providerId, g.grantedBy],
  );
}

export async function deleteQueryGrant(
  q: Queryable,
  agentId: string,
  providerId: string,
): Promise<boolean> {
  const { rows } = await q.query<{ agent_id: string }>(
    `delete from agent_query_providers where agent_id = $1 and provider_id = $2
     returning agent_id`,
    [agentId, providerId],
  );
  return rows.length > 0;
}

/** The providers granted to an agent, in the order they were granted (the first one serves). */
export async function grantedQueryProviders(
  q: Queryable,
  agentId: string,
): Promise<QueryProviderRecord[]> {
  const { rows } = await q.query<QueryProviderRecord>(
    `select ${columns('p')} from agent_query_providers g
     join tool_providers p on p.id = g.provider_id
     where g.agent_id = $1 order by g.granted_at, p.slug`,
    [agentId],
  );
  return rows;
}

/** Every grant, with the agent's and provider's names (for operators). */
export async function listQueryGrants(
  q: Queryable,
): Promise<(QueryGrantRecord & { agentName: string; providerName: string })[]> {
  const { rows } = await q.query<QueryGrantRecord & { agentName: string; providerName: string }>(
    `select g.agent_id as "agentId", g.provider_id as "providerId", g.granted_by as "grantedBy",
       g.granted_at as "grantedAt", a.name as "agentName", p.slug as "providerName"
     from agent_query_providers g
     join agents a on a.id = g.agent_id join tool_providers p on p.id = g.provider_id
     order by a.name, g.granted_at, p.slug`,
  );
  return rows;
}
