import type * as V1 from '@datadog/datadog-api-client/dist/packages/datadog-api-client-v1/index.js';
import type * as V2 from '@datadog/datadog-api-client/dist/packages/datadog-api-client-v2/index.js';
import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import {
  deliveryOutput,
  OUTBOX,
  type EffectKey,
  type EffectReceipt,
} from '../../src/tool/outbound.ts';
import {
  connect,
  datadogFailure,
  deliveryError,
  failureText,
  type Datadog,
} from './datadog-client.ts';
import { datadogSettings, type DatadogSettings } from './settings.ts';
import { refused } from '../../src/tool/package-support.ts';

// The arguments were decoded against the manifest's schema before a handler runs: times match
// now-<n><unit> or an ISO 8601 time with zone, tags their pattern, numbers their bounds.

const MAX_SERIES_SHOWN = 20;
const EXCERPT = 300;
/** How far back a lookup searches the event stream for our key. */
const EVENT_LOOKBACK_S = 24 * 3600;
/** Pages of current downtimes a lookup reads (100 each) before it gives up. */
const DOWNTIME_PAGES = 10;

/** Settings and a client for one call, or the observation that says why not. */
async function open(
  ctx: ToolContext,
  tool: string,
): Promise<
  { ok: true; settings: DatadogSettings; client: Datadog } | { ok: false; out: ToolOutput }
> {
  const outcome = datadogSettings(ctx.config);
  if (!outcome.ok) return { ok: false, out: refused(`${tool} cannot run: ${outcome.problem}.`) };
  return { ok: true, settings: outcome.settings, client: await connect(ctx, outcome.settings) };
}

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
function meshTag(key: EffectKey): string {
  return `mesh_key:${key.key.slice(0, 16)}`;
}

/** A stored receipt field as text (receipts are JSON the package wrote itself). */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : 'unknown';
}

function eventReceipt(event: V1.Event): EffectReceipt {
  return {
    externalId: event.idStr ?? String(event.id ?? ''),
    ...(event.url === undefined ? {} : { link: event.url }),
    data: { title: event.title ?? null },
  };
}

/**
 * Posts an event. Datadog takes no idempotency key, so the event carries ours as a tag, and the
 * lookup searches the last day's event stream for it: found → delivered. Not found is not proof
 * (the stream is searchable only once Datadog has processed the event), so the lookup then says
 * it cannot tell, and the machinery reports the effect unknown rather than posting it again.
 */
export async function postDatadogEvent(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const tags = Array.isArray(args['tags']) ? (args['tags'] as string[]) : [];
  if (tags.some((t) => t.toLowerCase().startsWith('mesh_key:')))
    return refused(
      'post_datadog_event: `tags` may not hold a mesh_key: tag; Mesh adds its own to find the event again.',
    );
  const opened = await open(ctx, 'post_datadog_event');
  if (!opened.ok) return opened.out;
  const { settings, client } = opened;
  const title = args['title'] as string;
  const text = args['text'] as string;
  // The schema admits only info, success, warning and error.
  const alertType = typeof args['alert_type'] === 'string' ? args['alert_type'] : 'info';
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'event',
    kind: 'datadog.event_create',
    target: `event stream (${settings.site})`,
    payload: { title, text, tags, alert_type: alertType },
    async send(key) {
      const { events } = await client.v1();
      try {
        const answer = await events.createEvent({
          body: {
            title,
            text,
            tags: [...tags, meshTag(key)],
            alertType: alertType as V1.EventAlertType,
          },
        });
        if (!answer.event) throw new Error('Datadog answered without the event');
        return eventReceipt(answer.event);
      } catch (error) {
        throw deliveryError('posting the event', settings, client, error);
      }
    },
    async lookup(key) {
      const { events } = await client.v1();
      const tag = meshTag(key);
      const nowS = Math.floor(Date.now() / 1000);
      const answer = await events.listEvents({
        start: nowS - EVENT_LOOKBACK_S,
        end: nowS + 300,
        tags: tag,
      });
      const event = (answer.events ?? []).find((e) => (e.tags ?? []).includes(tag));
      if (!event) throw new Error(`no event tagged ${tag} in the event stream yet`);
      return eventReceipt(event);
    },
  });
  return deliveryOutput('posting the Datadog event', delivery, (receipt) => ({
    text: `Posted Datadog event ${receipt.externalId} "${textOf(receipt.data?.['title'])}": ${receipt.link ?? ''}`,
    data: { id: receipt.externalId, url: receipt.link ?? null },
  }));
}

/** The monitor a downtime is scoped to, when it is scoped to one by id. */
function downtimeMonitor(downtime: V2.DowntimeResponseData): number | undefined {
  const identifier = downtime.attributes?.monitorIdentifier as { monitorId?: unknown } | undefined;
  return typeof identifier?.monitorId === 'number' ? identifier.monitorId : undefined;
}

function downtimeEnd(downtime: V2.DowntimeResponseData): string | null {
  const end = (downtime.attributes?.schedule as { end?: unknown } | undefined)?.end;
  return end instanceof Date ? end.toISOString() : null;
}

/**
 * Mutes a monitor with a v2 downtime scoped to it (the v1 mute endpoints are deprecated), ending
 * after the given minutes. Datadog takes no idempotency key, so the downtime's message carries
 * ours; the lookup reads the current downtimes for one on this monitor with our key: found →
 * delivered, not found → sent again (a second downtime of the same scope and end is harmless).
 */
export async function muteDatadogMonitor(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const opened = await open(ctx, 'mute_datadog_monitor');
  if (!opened.ok) return opened.out;
  const { settings, client } = opened;
  const monitorId = args['monitor_id'] as number;
  const minutes = args['duration_minutes'] as number;
  const scope = typeof args['scope'] === 'string' ? args['scope'].trim() || '*' : '*';
  const reason = typeof args['message'] === 'string' ? args['message'].trim() : '';
  let monitor: V1.Monitor;
  try {
    monitor = await (await client.v1()).monitors.getMonitor({ monitorId });
  } catch (error) {
    if (datadogFailure(error)?.status === 404)
      return refused(`Datadog has no monitor ${monitorId} that this agent's account can see.`);
    return refused(failureText(`reading monitor ${monitorId}`, settings, error));
  }
  const monitorName = monitor.name ?? `monitor ${monitorId}`;
  const link = `${settings.appUrl}/monitors/${monitorId}`;
  const receipt = (downtime: V2.DowntimeResponseData): EffectReceipt => ({
    externalId: downtime.id ?? '',
    link,
    data: {
      monitor_id: monitorId,
      monitor: monitorName,
      scope: downtime.attributes?.scope ?? scope,
      ends: downtimeEnd(downtime),
    },
  });
  const delivery = await ctx.services.get(OUTBOX).deliver(ctx, {
    name: 'downtime',
    kind: 'datadog.monitor_mute',
    target: `monitor ${monitorId}`,
    payload: { monitor_id: monitorId, scope, duration_minutes: minutes, message: reason },
    async send(key) {
      const { downtimes } = await client.v2();
      try {
        const answer = await downtimes.createDowntime({
          body: {
            data: {
              type: 'downtime',
              attributes: {
                monitorIdentifier: { monitorId },
                scope,
                message: reason === '' ? meshTag(key) : `${reason}\n\n${meshTag(key)}`,
                schedule: { end: new Date(Date.now() + minutes * 60_000) },
              },
            },
          },
        });
        if (!answer.data) throw new Error('Datadog answered without the downtime');
        return receipt(answer.data);
      } catch (error) {
        throw deliveryError(`muting monitor ${monitorId}`, settings, client, error);
      }
    },
    async lookup(key) {
      const { downtimes } = await client.v2();
      const tag = meshTag(key);
      for (let page = 0; page < DOWNTIME_PAGES; page++) {
        const answer = await downtimes.listDowntimes({
          currentOnly: true,
          pageOffset: page * 100,
          pageLimit: 100,
        });
        const data = answer.data ?? [];
        const ours = data.find(
          (d) => downtimeMonitor(d) === monitorId && (d.attributes?.message ?? '').includes(tag),
        );
        if (ours) return receipt(ours);
        if (data.length < 100) return undefined;
      }
      throw new Error('too many current downtimes to search for ours');
    },
  });
  return deliveryOutput(`muting monitor ${monitorId}`, delivery, (r) => ({
    text:
      `Muted monitor ${monitorId} (${textOf(r.data?.['monitor'])}) for scope ${textOf(r.data?.['scope'])} ` +
      `until ${textOf(r.data?.['ends'])} (downtime ${r.externalId}): ${r.link ?? ''}`,
    data: { downtime_id: r.externalId, url: r.link ?? null, ...r.data },
  }));
}
