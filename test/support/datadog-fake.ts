import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback fake of the Datadog API endpoints mesh.datadog uses, in Datadog's wire format (field
 * names as in @datadog/datadog-api-client's models):
 *
 * - `GET  /api/v1/query?from&to&query`         metrics (MetricsQueryResponse)
 * - `POST /api/v2/logs/events/search`          logs (LogsListRequest → LogsListResponse)
 * - `GET  /api/v1/monitor`, `/api/v1/monitor/{id}` monitors (Monitor)
 * - `POST /api/v1/events`, `GET /api/v1/events?start&end&tags` events (EventCreateResponse, EventListResponse)
 * - `POST /api/v2/downtime`, `GET /api/v2/downtime` downtimes (DowntimeResponse, ListDowntimesResponse)
 *
 * It checks the keys as Datadog does: `DD-API-KEY` on every endpoint, `DD-APPLICATION-KEY` on all
 * but event posting, answering 403 `{"errors":["Forbidden"]}` otherwise; and records every
 * request it received.
 */

export interface FakeMonitor {
  readonly id: number;
  readonly name: string;
  readonly type: string;
  readonly query: string;
  readonly tags: readonly string[];
  overall_state: string;
}

export interface FakeEvent {
  readonly id: number;
  readonly title: string;
  readonly text: string;
  readonly tags: readonly string[];
  readonly alert_type: string;
  readonly date_happened: number;
  readonly url: string;
}

export interface FakeDowntime {
  readonly id: string;
  readonly monitorId: number;
  readonly scope: string;
  readonly message: string;
  readonly start: string;
  readonly end: string | null;
}

export interface FakeLog {
  readonly id: string;
  readonly timestamp: string;
  readonly service: string;
  readonly status: string;
  readonly host: string;
  readonly message: string;
}

/** One request as received. */
export interface DatadogReceived {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly body: unknown;
  /** Whether DD-API-KEY / DD-APPLICATION-KEY carried a key the fake knows. */
  readonly apiKeyOk: boolean;
  readonly appKeyOk: boolean;
}

/**
 * A failure to answer the next write (event post, downtime create) with: `ratelimited` (HTTP 429
 * with X-RateLimit-Reset: 2, not applied), `internal` (HTTP 500, not applied), `lost` (applied,
 * then answered 500), `dropped` (the connection closed before anything was applied).
 */
export type DatadogFailure = 'ratelimited' | 'internal' | 'lost' | 'dropped';

export interface DatadogFake {
  /** `http://127.0.0.1:<port>`: what `api_url` is set to. */
  readonly url: string;
  readonly apiKeys: Set<string>;
  readonly appKeys: Set<string>;
  readonly monitors: FakeMonitor[];
  readonly events: FakeEvent[];
  readonly downtimes: FakeDowntime[];
  readonly logs: FakeLog[];
  readonly received: DatadogReceived[];
  readonly failures: DatadogFailure[];
  reset(): void;
  close(): Promise<void>;
}

const APP = 'https://app.datadoghq.com';

const forbidden = { errors: ['Forbidden'] };

/** The metric name of a query such as `avg:system.cpu.user{env:prod} by {host}`. */
function metricOf(query: string): string | undefined {
  return /^(?:[a-z0-9]+:)?([A-Za-z][\w.]*)\{[^}]*\}(?:\s+by\s+\{[^}]*\})?$/.exec(query.trim())?.[1];
}

export async function startDatadogFake(): Promise<DatadogFake> {
  const apiKeys = new Set<string>();
  const appKeys = new Set<string>();
  const monitors: FakeMonitor[] = [];
  const events: FakeEvent[] = [];
  const downtimes: FakeDowntime[] = [];
  const logs: FakeLog[] = [];
  const received: DatadogReceived[] = [];
  const failures: DatadogFailure[] = [];
  let eventId = 0;

  const seed = () => {
    eventId = 5_000_000_000;
    monitors.length = 0;
    monitors.push(
      {
        id: 101,
        name: 'API p99 latency high',
        type: 'metric alert',
        query: 'avg(last_5m):p99:trace.http.request{service:api} > 2',
        tags: ['service:api', 'team:sre'],
        overall_state: 'Alert',
      },
      {
        id: 102,
        name: 'Disk almost full',
        type: 'metric alert',
        query: 'avg(last_5m):avg:system.disk.in_use{*} by {host} > 0.9',
        tags: ['team:infra'],
        overall_state: 'OK',
      },
    );
    events.length = 0;
    downtimes.length = 0;
    logs.length = 0;
    const now = Date.now();
    for (let i = 0; i < 5; i++)
      logs.push({
        id: `AQAAAY${i}`,
        timestamp: new Date(now - (i + 1) * 60_000).toISOString(),
        service: i % 2 === 0 ? 'api' : 'worker',
        status: i < 3 ? 'error' : 'info',
        host: `web-${i}`,
        message: i === 0 ? `upstream timeout ${'x'.repeat(400)}` : `request ${i} done`,
      });
  };
  seed();

  const monitorView = (m: FakeMonitor) => {
    const nowS = Date.now() / 1000;
    const matching = downtimes
      .filter((d) => d.monitorId === m.id)
      .map((d) => ({
        id: Number.parseInt(d.id.slice(0, 8), 16),
        scope: [d.scope],
        start: Date.parse(d.start) / 1000,
        end: d.end === null ? null : Date.parse(d.end) / 1000,
      }))
      .filter((d) => d.start <= nowS && (d.end === null || d.end > nowS));
    return {
      id: m.id,
      name: m.name,
      type: m.type,
      query: m.query,
      message: 'Notify @sre',
      tags: m.tags,
      overall_state: m.overall_state,
      multi: false,
      priority: null,
      created: '2026-01-05T10:00:00.000Z',
      modified: '2026-01-05T10:00:00.000Z',
      creator: { email: 'sre@example.com', handle: 'sre@example.com', name: 'SRE' },
      options: { notify_no_data: false, thresholds: { critical: 2 }, silenced: {} },
      matching_downtimes: matching,
      restricted_roles: null,
    };
  };

  const downtimeView = (d: FakeDowntime) => ({
    id: d.id,
    type: 'downtime',
    attributes: {
      canceled: null,
      created: d.start,
      modified: d.start,
      display_timezone: 'UTC',
      message: d.message,
      monitor_identifier: { monitor_id: d.monitorId },
      mute_first_recovery_notification: false,
      notify_end_states: ['alert', 'no data', 'warn'],
      notify_end_types: ['expired'],
      schedule: { start: d.start, end: d.end },
      scope: d.scope,
      status: 'active',
    },
    relationships: { monitor: { data: { id: String(d.monitorId), type: 'monitors' } } },
  });

  const eventView = (e: FakeEvent) => ({
    id: e.id,
    id_str: String(e.id),
    title: e.title,
    text: e.text,
    tags: e.tags,
    alert_type: e.alert_type,
    date_happened: e.date_happened,
    priority: 'normal',
    url: e.url,
  });

  type Answer = [number, unknown];

  const metrics = (q: Record<string, string>): Answer => {
    const from = Number(q['from']);
    const to = Number(q['to']);
    const query = q['query'] ?? '';
    const metric = metricOf(query);
    if (!Number.isInteger(from) || !Number.isInteger(to) || metric === undefined)
      return [400, { errors: ['Error parsing query: unable to parse the query'] }];
    const series =
      metric === 'system.cpu.user'
        ? ['host:web-1', 'host:web-2'].map((scope, s) => {
            const pointlist = Array.from({ length: 4 }, (_, i) => [
              (from + i * 60) * 1000,
              i === 2 ? null : 10 * (s + 1) + i,
            ]);
            return {
              aggr: 'avg',
              metric,
              display_name: metric,
              expression: `avg:${metric}{${scope}}`,
              scope,
              tag_set: [scope],
              pointlist,
              length: pointlist.length,
              start: from * 1000,
              end: (from + 180) * 1000,
              interval: 60,
              query_index: 0,
              unit: [
                {
                  family: 'percentage',
                  name: 'percent',
                  plural: 'percent',
                  scale_factor: 1,
                  short_name: '%',
                },
                null,
              ],
            };
          })
        : [];
    return [
      200,
      {
        status: 'ok',
        res_type: 'time_series',
        query,
        from_date: from * 1000,
        to_date: to * 1000,
        series,
        group_by: [],
        message: '',
      },
    ];
  };

  const searchLogs = (body: Record<string, unknown>): Answer => {
    const filter = (body['filter'] ?? {}) as Record<string, unknown>;
    const page = (body['page'] ?? {}) as Record<string, unknown>;
    const limit = typeof page['limit'] === 'number' ? page['limit'] : 10;
    if (limit > 5000) return [400, { errors: ['page[limit] must be at most 5000'] }];
    const from = Date.parse(typeof filter['from'] === 'string' ? filter['from'] : '');
    const to = Date.parse(typeof filter['to'] === 'string' ? filter['to'] : '');
    const terms = (typeof filter['query'] === 'string' ? filter['query'] : '*')
      .split(/\s+/)
      .filter((t) => t !== '' && t !== '*');
    const matching = logs
      .filter((l) => Date.parse(l.timestamp) >= from && Date.parse(l.timestamp) <= to)
      .filter((l) =>
        terms.every((t) => {
          const [field, value] = t.includes(':') ? t.split(':', 2) : [undefined, t];
          if (field === 'service') return l.service === value;
          if (field === 'status') return l.status === value;
          return l.message.includes(value ?? '');
        }),
      )
      .sort((a, b) => b.timestamp.localeCompare(a.timestamp));
    const data = matching.slice(0, limit).map((l) => ({
      id: l.id,
      type: 'log',
      attributes: {
        timestamp: l.timestamp,
        service: l.service,
        status: l.status,
        host: l.host,
        message: l.message,
        tags: [`service:${l.service}`],
        attributes: {},
      },
    }));
    const more = matching.length > limit;
    return [
      200,
      {
        data,
        ...(more ? { links: { next: `${base}/api/v2/logs/events?page[cursor]=c1` } } : {}),
        meta: {
          elapsed: 12,
          request_id: 'pddv1ChZ',
          status: 'done',
          ...(more ? { page: { after: 'c1' } } : {}),
        },
      },
    ];
  };

  const listMonitors = (q: Record<string, string>): Answer => {
    const name = q['name']?.toLowerCase();
    const monitorTags = q['monitor_tags']?.split(',') ?? [];
    const pageSize = Number(q['page_size'] ?? 100);
    const found = monitors
      .filter((m) => name === undefined || m.name.toLowerCase().includes(name))
      .filter((m) => monitorTags.every((t) => m.tags.includes(t)))
      .slice(0, pageSize);
    return [200, found.map(monitorView)];
  };

  const createEvent = (body: Record<string, unknown>): Answer => {
    if (typeof body['title'] !== 'string' || typeof body['text'] !== 'string')
      return [400, { errors: ["Event endpoint requires 'title' and 'text' fields"] }];
    const id = ++eventId;
    const event: FakeEvent = {
      id,
      title: body['title'],
      text: body['text'],
      tags: Array.isArray(body['tags']) ? (body['tags'] as string[]) : [],
      alert_type: typeof body['alert_type'] === 'string' ? body['alert_type'] : 'info',
      date_happened: Math.floor(Date.now() / 1000),
      url: `${APP}/event/event?id=${id}`,
    };
    events.push(event);
    return [202, { status: 'ok', event: eventView(event) }];
  };

  const listEvents = (q: Record<string, string>): Answer => {
    const start = Number(q['start']);
    const end = Number(q['end']);
    if (!Number.isInteger(start) || !Number.isInteger(end))
      return [400, { errors: ['start and end are required'] }];
    const tags = q['tags']?.split(',') ?? [];
    const found = events
      .filter((e) => e.date_happened >= start && e.date_happened <= end)
      .filter((e) => tags.every((t) => e.tags.includes(t)));
    return [200, { status: 'ok', events: found.map(eventView) }];
  };

  const createDowntime = (body: Record<string, unknown>): Answer => {
    const data = (body['data'] ?? {}) as Record<string, unknown>;
    const a = (data['attributes'] ?? {}) as Record<string, unknown>;
    const identifier = (a['monitor_identifier'] ?? {}) as Record<string, unknown>;
    const schedule = (a['schedule'] ?? {}) as Record<string, unknown>;
    if (data['type'] !== 'downtime' || typeof a['scope'] !== 'string')
      return [400, { errors: ['invalid downtime: type and scope are required'] }];
    const monitor = monitors.find((m) => m.id === identifier['monitor_id']);
    if (!monitor) return [400, { errors: ['monitor_identifier: monitor not found'] }];
    const downtime: FakeDowntime = {
      id: randomUUID(),
      monitorId: monitor.id,
      scope: a['scope'],
      message: typeof a['message'] === 'string' ? a['message'] : '',
      start: typeof schedule['start'] === 'string' ? schedule['start'] : new Date().toISOString(),
      end: typeof schedule['end'] === 'string' ? schedule['end'] : null,
    };
    downtimes.push(downtime);
    return [200, { data: downtimeView(downtime) }];
  };

  const listDowntimes = (q: Record<string, string>): Answer => {
    const offset = Number(q['page[offset]'] ?? 0);
    const limit = Number(q['page[limit]'] ?? 30);
    const now = Date.now();
    const current =
      q['current_only'] === 'true'
        ? downtimes.filter((d) => d.end === null || Date.parse(d.end) > now)
        : downtimes;
    return [
      200,
      {
        data: current.slice(offset, offset + limit).map(downtimeView),
        meta: { page: { total_filtered_count: current.length } },
      },
    ];
  };

  const WRITES = new Set(['POST /api/v1/events', 'POST /api/v2/downtime']);

  const route = (
    method: string,
    path: string,
    q: Record<string, string>,
    body: Record<string, unknown>,
  ): Answer => {
    const monitor = /^\/api\/v1\/monitor\/([0-9]+)$/.exec(path);
    if (method === 'GET' && monitor) {
      const found = monitors.find((m) => m.id === Number(monitor[1]));
      return found ? [200, monitorView(found)] : [404, { errors: ['Monitor not found'] }];
    }
    switch (`${method} ${path}`) {
      case 'GET /api/v1/query':
        return metrics(q);
      case 'POST /api/v2/logs/events/search':
        return searchLogs(body);
      case 'GET /api/v1/monitor':
        return listMonitors(q);
      case 'POST /api/v1/events':
        return createEvent(body);
      case 'GET /api/v1/events':
        return listEvents(q);
      case 'POST /api/v2/downtime':
        return createDowntime(body);
      case 'GET /api/v2/downtime':
        return listDowntimes(q);
      default:
        return [404, { errors: ['Not found'] }];
    }
  };

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string) => {
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(JSON.stringify(payload));
    };
    const url = new URL(req.url ?? '/', base);
    const method = req.method ?? 'GET';
    const query = Object.fromEntries(url.searchParams);
    let body: Record<string, unknown> = {};
    if (raw !== '') {
      try {
        body = JSON.parse(raw) as Record<string, unknown>;
      } catch {
        return send(400, { errors: ['Invalid JSON'] });
      }
    }
    const apiKeyOk = apiKeys.has(String(req.headers['dd-api-key'] ?? ''));
    const appKeyOk = appKeys.has(String(req.headers['dd-application-key'] ?? ''));
    received.push({ method, path: url.pathname, query, body, apiKeyOk, appKeyOk });
    const endpoint = `${method} ${url.pathname}`;
    // Posting an event needs only the API key; everything else needs both.
    if (!apiKeyOk || (!appKeyOk && endpoint !== 'POST /api/v1/events')) return send(403, forbidden);
    const failure = WRITES.has(endpoint) ? failures.shift() : undefined;
    if (failure === 'dropped') return void req.socket.destroy();
    if (failure === 'ratelimited')
      return send(
        429,
        { errors: ['Rate limit exceeded'] },
        {
          'x-ratelimit-limit': '100',
          'x-ratelimit-period': '60',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': '2',
        },
      );
    if (failure === 'internal') return send(500, { errors: ['Internal Server Error'] });
    const [status, payload] = route(method, url.pathname, query, body);
    if (failure === 'lost') return send(500, { errors: ['Internal Server Error'] });
    return send(status, payload);
  };

  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (chunk: Buffer) => (raw += chunk.toString()));
    req.on('end', () => handle(req, res, raw));
  });
  // Loading the SDK's v2 half blocks this process's event loop for a second or more (several
  // under load); a server keep-alive shorter than that would close the idle connection the client
  // is about to reuse, and the next request would meet a reset.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    apiKeys,
    appKeys,
    monitors,
    events,
    downtimes,
    logs,
    received,
    failures,
    reset() {
      received.length = 0;
      failures.length = 0;
      seed();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
