import type { Queryable } from './db.ts';
import { runUsage } from './runs.ts';

/*
 * What runs have cost, across agents, over the last days: for the usage overview.
 */

/** One agent's day: its runs, tokens and tool calls. */
export interface UsageDay {
  readonly day: string;
  readonly agent: string;
  readonly runs: number;
  readonly tokens: number;
  readonly toolCalls: number;
}

/** Runs that did not succeed, by how they ended and why. */
export interface FailureCount {
  readonly status: string;
  readonly reason: string;
  readonly runs: number;
}

/** A tool's call durations: how many, and the median and 95th percentile, in ms. */
export interface ToolLatency {
  readonly tool: string;
  readonly calls: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
}

/** Runs, tokens and tool calls per day per agent over the last `days` days (UTC), oldest first. */
export async function usageByDay(q: Queryable, days: number): Promise<UsageDay[]> {
  const { rows } = await q.query<{
    day: string;
    agent: string;
    runs: string;
    tokens: string;
    toolCalls: string;
  }>(
    `select to_char(date_trunc('day', r.created_at at time zone 'UTC'), 'YYYY-MM-DD') as day,
       a.name as agent, count(*) as runs,
       coalesce(sum(coalesce((u.usage->>'inputTokens')::numeric, 0) + coalesce((u.usage->>'outputTokens')::numeric, 0)), 0) as tokens,
       coalesce(sum(coalesce((u.usage->>'toolCalls')::numeric, 0)), 0) as "toolCalls"
     from runs r join agents a on a.id = r.agent_id cross join lateral (select ${runUsage('r')} as usage) u
     where r.created_at >= date_trunc('day', now() at time zone 'UTC') at time zone 'UTC' - make_interval(days => $1 - 1)
     group by 1, 2 order by 1, 2`,
    [days],
  );
  return rows.map((r) => ({
    day: r.day,
    agent: r.agent,
    runs: Number(r.runs),
    tokens: Number(r.tokens),
    toolCalls: Number(r.toolCalls),
  }));
}

/** The commonest ways runs failed over the last `days` days, most first. */
export async function failuresByReason(
  q: Queryable,
  days: number,
  limit: number,
): Promise<FailureCount[]> {
  const { rows } = await q.query<{ status: string; reason: string; runs: string }>(
    `select status, coalesce(reason, '') as reason, count(*) as runs from runs
     where status in ('failed', 'budget_exhausted', 'interrupted')
       and created_at >= now() - make_interval(days => $1)
     group by 1, 2 order by 3 desc, 2 limit $2`,
    [days, limit],
  );
  return rows.map((r) => ({ status: r.status, reason: r.reason, runs: Number(r.runs) }));
}

/** The slowest tools over the last `days` days, by their 95th percentile, slowest first. */
export async function slowestTools(
  q: Queryable,
  days: number,
  limit: number,
): Promise<ToolLatency[]> {
  const { rows } = await q.query<{ tool: string; calls: string; p50: string; p95: string }>(
    `select tool_name as tool, count(*) as calls,
       percentile_cont(0.5) within group (order by extract(epoch from finished_at - started_at) * 1000) as p50,
       percentile_cont(0.95) within group (order by extract(epoch from finished_at - started_at) * 1000) as p95
     from run_steps
     where kind = 'tool_call' and finished_at is not null and tool_name is not null
       and started_at >= now() - make_interval(days => $1)
     group by 1 order by 4 desc, 1 limit $2`,
    [days, limit],
  );
  return rows.map((r) => ({
    tool: r.tool,
    calls: Number(r.calls),
    p50Ms: Math.round(Number(r.p50)),
    p95Ms: Math.round(Number(r.p95)),
  }));
}
