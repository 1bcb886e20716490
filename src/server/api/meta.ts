import { metricsText, METRICS_CONTENT_TYPE } from '../../app/metrics.ts';
import { openApiDocument } from '../openapi.ts';
import { route, type Route } from './context.ts';

/**
 * The route that describes the API. It is handed the full route list rather than importing it,
 * so the list can include this route without an import cycle.
 */
export function openApiRoute(routes: () => readonly Route[]): Route {
  return route({
    method: 'GET',
    path: '/api/openapi.json',
    operationId: 'getOpenApi',
    summary: 'This API, described as an OpenAPI 3.1 document',
    tag: 'meta',
    handle: async ({ context }) =>
      openApiDocument(routes(), { title: 'Mesh operator API', version: context.version }),
  });
}

/** The metrics operators scrape, in the Prometheus text format, with the operator token. */
export const metricsRoute: Route = route({
  method: 'GET',
  path: '/api/metrics',
  operationId: 'getMetrics',
  summary:
    "This process's metrics in the Prometheus text format: the run queue's depth and waits, run and tool-call durations, the connection pool, Node's event-loop lag and heap",
  description: [
    "Scrape each replica (Prometheus: `authorization: {credentials: <operator token>}`). Mesh's own series:",
    '',
    '- `mesh_runs_queued` (gauge): runs waiting for a worker, deployment-wide;',
    "- `mesh_run_queue_wait_seconds{kind}` (histogram): time from a run's creation to its first claim;",
    '- `mesh_run_duration_seconds{kind,status}` (histogram): how long this process drove a run until it ended;',
    '- `mesh_runs_active` (gauge): runs this process drives now;',
    '- `mesh_tool_call_duration_seconds{tool,class,outcome}` (histogram): each handler call;',
    '- `mesh_db_pool_connections{state}`, `mesh_db_pool_waiting` (gauges, PostgreSQL only);',
    "- Node's defaults, among them `nodejs_eventloop_lag_seconds` and its percentiles.",
  ].join('\n'),
  tag: 'meta',
  mediaType: METRICS_CONTENT_TYPE,
  response: { type: 'string', contentMediaType: 'text/plain' },
  handle: async ({ context }) =>
    new Response(await metricsText(context.mesh), {
      headers: { 'content-type': METRICS_CONTENT_TYPE },
    }),
});
