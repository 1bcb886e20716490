import type * as V1 from '@datadog/datadog-api-client/dist/packages/datadog-api-client-v1/index.js';
import type * as V2 from '@datadog/datadog-api-client/dist/packages/datadog-api-client-v2/index.js';
import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { failureText } from './datadog-client.ts';
import { refused } from '../../src/tool/package-support.ts';
import { openCall as open } from './open-call.ts';

// The arguments were decoded against the manifest's schema before a handler runs: times match
// now-<n><unit> or an ISO 8601 time with zone, tags their pattern, numbers their bounds.

const MAX_SERIES_SHOWN = 20;
const EXCERPT = 300;

const UNIT_S: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** A `from`/`to` argument as epoch milliseconds (the schema admits only parsable forms). */
function instant(value: string, nowMs: number): number {
  const relative = /^now(?:-([0-9]{1,6})([smhdw]))?$/.exec(value);
  if (relative) return nowMs - Number(relative[1] ?? 0) * (UNIT_S[relative[2] ?? 's'] ?? 1) * 1000;
  return Date.parse(value);
}

/** The window of a query, or the observation naming the field at fault (never its value). */
function window(
  tool: string,
  args: JsonObject,
  defaultFrom: string,
): { ok: true; fromMs: number; toMs: number } | { ok: false; out: ToolOutput } {
  const now = Date.now();
  const fromMs = instant(typeof args['from'] === 'string' ? args['from'] : defaultFrom, now);
  const toMs = instant(typeof args['to'] === 'string' ? args['to'] : 'now', now);
  if (Number.isNaN(fromMs))
    return { ok: false, out: refused(`${tool}: \`from\` is not a valid time.`) };
  if (Number.isNaN(toMs))
    return { ok: false, out: refused(`${tool}: \`to\` is not a valid time.`) };
  if (fromMs >= toMs)
    return { ok: false, out: refused(`${tool}: \`from\` must be before \`to\`.`) };
  return { ok: true, fromMs, toMs };
}

/** A number as the model reads it: six significant digits. */
function shown(value: number): number {
  return Number(value.toPrecision(6));
}

/** Queries metrics and summarizes each series (the points themselves stay in Datadog). */
export async function queryDatadogMetrics(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const span = window('query_datadog_metrics', args, 'now-1h');
  if (!span.ok) return span.out;
  const opened = await open(ctx, 'query_datadog_metrics');
  if (!opened.ok) return opened.out;
  const query = args['query'] as string;
  let answer: V1.MetricsQueryResponse;
  try {
    const { metrics } = await opened.client.v1();
    answer = await metrics.queryMetrics({
      from: Math.floor(span.fromMs / 1000),
      to: Math.floor(span.toMs / 1000),
      query,
    });
  } catch (error) {
    return refused(failureText('the metrics query', opened.settings, error));
  }
  if (answer.status === 'error' || (answer.error ?? '') !== '')
    return refused(
      `Datadog could not run the metrics query: ${(answer.error ?? '').slice(0, 300)}.`,
    );
  const series = (answer.series ?? []).map((s) => {
    const values = (s.pointlist ?? [])
      .map((point) => point[1])
      .filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    const unit = s.unit?.[0];
    return {
      metric: s.metric ?? null,
      scope: s.scope ?? null,
      expression: s.expression ?? null,
      unit: unit && typeof unit === 'object' && 'name' in unit ? (unit.name ?? null) : null,
      points: values.length,
      min: values.length === 0 ? null : shown(Math.min(...values)),
      max: values.length === 0 ? null : shown(Math.max(...values)),
      last: values.length === 0 ? null : shown(values[values.length - 1] as number),
    };
  });
  const lines = series
    .slice(0, MAX_SERIES_SHOWN)
    .map(
      (s) =>
        `${s.expression ?? s.metric ?? 'series'} [${s.scope ?? '*'}]: ${s.points} points` +
        (s.points === 0
          ? ''
          : `, min ${String(s.min)}, max ${String(s.max)}, last ${String(s.last)}${s.unit ? ` ${s.unit}` : ''}`),
    );
  if (series.length > MAX_SERIES_SHOWN)
    lines.push(`… and ${series.length - MAX_SERIES_SHOWN} more series; narrow the query.`);
  return {
    text: series.length === 0 ? 'No data for that query in the window.' : lines.join('\n'),
    data: {
      from: new Date(span.fromMs).toISOString(),
      to: new Date(span.toMs).toISOString(),
      series,
    },
  };
}

/** Searches logs, newest first. */
export async function searchDatadogLogs(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const span = window('search_datadog_logs', args, 'now-15m');
  if (!span.ok) return span.out;
  const opened = await open(ctx, 'search_datadog_logs');
  if (!opened.ok) return opened.out;
  const limit = Math.min(100, typeof args['limit'] === 'number' ? args['limit'] : 20);
  let answer: V2.LogsListResponse;
  try {
    const { logs } = await opened.client.v2();
    answer = await logs.listLogs({
      body: {
        filter: {
          query: args['query'] as string,
          from: new Date(span.fromMs).toISOString(),
          to: new Date(span.toMs).toISOString(),
        },
        sort: '-timestamp',
        page: { limit },
      },
    });
  } catch (error) {
    return refused(failureText('the log search', opened.settings, error));
  }
  const found = (answer.data ?? []).map((log) => {
    const a = log.attributes ?? {};
    const message = a.message ?? '';
    return {
      id: log.id ?? null,
      timestamp: a.timestamp instanceof Date ? a.timestamp.toISOString() : null,
      service: a.service ?? null,
      status: a.status ?? null,
      host: a.host ?? null,
      message: message.length > EXCERPT ? `${message.slice(0, EXCERPT)}…` : message,
    };
  });
  const more = answer.meta?.page?.after !== undefined;
  const lines = found.map(
    (l) =>
      `${l.timestamp ?? '?'} ${l.status ?? '-'} ${l.service ?? '-'}${l.host ? ` (${l.host})` : ''}: ${l.message}`,
  );
  if (more) lines.push('More logs match; narrow the query or the window.');
  return {
    text: found.length === 0 ? 'No logs match in the window.' : lines.join('\n'),
    data: { logs: found, more },
  };
}

/** Whether a monitor is muted now: an active downtime matches it, or a legacy silence. */
function isMuted(monitor: V1.Monitor, nowS: number): boolean {
  const active = (monitor.matchingDowntimes ?? []).some(
    (d) => (d.start ?? 0) <= nowS && (d.end === undefined || d.end === null || d.end > nowS),
  );
  return active || Object.keys(monitor.options?.silenced ?? {}).length > 0;
}

/** Lists monitors with their state. */
export async function listDatadogMonitors(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const opened = await open(ctx, 'list_datadog_monitors');
  if (!opened.ok) return opened.out;
  const joined = (key: string) =>
    Array.isArray(args[key]) && args[key].length > 0 ? args[key].join(',') : undefined;
  const name = typeof args['name'] === 'string' ? args['name'] : undefined;
  const tags = joined('tags');
  const monitorTags = joined('monitor_tags');
  let monitors: V1.Monitor[];
  try {
    const api = (await opened.client.v1()).monitors;
    monitors = await api.listMonitors({
      ...(name === undefined ? {} : { name }),
      ...(tags === undefined ? {} : { tags }),
      ...(monitorTags === undefined ? {} : { monitorTags }),
      withDowntimes: true,
      page: 0,
      pageSize: typeof args['limit'] === 'number' ? args['limit'] : 50,
    });
  } catch (error) {
    return refused(failureText('the monitor list', opened.settings, error));
  }
  const nowS = Date.now() / 1000;
  const listed = monitors.map((m) => ({
    id: m.id ?? null,
    name: m.name ?? null,
    type: typeof m.type === 'string' ? m.type : null,
    overall_state: typeof m.overallState === 'string' ? m.overallState : null,
    muted: isMuted(m, nowS),
  }));
  return {
    text:
      listed.length === 0
        ? 'No Datadog monitors match.'
        : listed
            .map(
              (m) =>
                `#${String(m.id)} ${m.name ?? ''} [${m.overall_state ?? 'unknown'}] (${m.type ?? 'unknown type'})${m.muted ? ' muted' : ''}`,
            )
            .join('\n'),
    data: { monitors: listed },
  };
}

/** Our key as Datadog carries it: a tag, and a line of a downtime's message. */

export { muteDatadogMonitor, postDatadogEvent } from './effects.ts';
