import { collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { RunRecord } from '../run/records.ts';
import type { WorkerObserver } from '../run/worker.ts';
import { observeCalls } from '../tool/call-observer.ts';
import type { Mesh } from './mesh.ts';

/*
 * The metrics operators scrape, in the Prometheus text format (`GET /api/metrics`). One registry
 * per process, made the first time a worker starts here: Node's own (event-loop lag, heap, GC)
 * and Mesh's. The run queue and the connection pool are read when scraped.
 */

/** Seconds buckets from a millisecond to ten minutes: tool calls, queue waits and turns alike. */
const SECONDS = [0.001, 0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

interface ProcessMetrics {
  readonly registry: Registry;
  readonly queuedRuns: Gauge;
  /** The pool's gauges, registered on the first scrape of a Mesh that has a pool. */
  pool?: { readonly connections: Gauge<'state'>; readonly waiting: Gauge };
  readonly worker: WorkerObserver;
}

let made: ProcessMetrics | undefined;

function processMetrics(): ProcessMetrics {
  if (made) return made;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 10 });
  const queuedRuns = new Gauge({
    name: 'mesh_runs_queued',
    help: 'Runs waiting for a worker, across the deployment (read from the database when scraped).',
    registers: [registry],
  });
  const queueWait = new Histogram({
    name: 'mesh_run_queue_wait_seconds',
    help: 'How long a run waited in the queue before a worker of this process took it.',
    labelNames: ['kind'],
    buckets: SECONDS,
    registers: [registry],
  });
  const runDuration = new Histogram({
    name: 'mesh_run_duration_seconds',
    help: 'How long this process drove a run until it ended, by kind and end status.',
    labelNames: ['kind', 'status'],
    buckets: SECONDS,
    registers: [registry],
  });
  const activeRuns = new Gauge({
    name: 'mesh_runs_active',
    help: 'Runs this process is driving now.',
    registers: [registry],
  });
  const toolCalls = new Histogram({
    name: 'mesh_tool_call_duration_seconds',
    help: "How long a tool's handler took, by tool, class and outcome (result, tool_error, unavailable, fatal, ...).",
    labelNames: ['tool', 'class', 'outcome'],
    buckets: SECONDS,
    registers: [registry],
  });
  observeCalls((call) =>
    toolCalls.observe(
      { tool: call.tool, class: call.toolClass, outcome: call.outcome },
      call.seconds,
    ),
  );
  made = {
    registry,
    queuedRuns,
    worker: {
      claimed(run: RunRecord, queuedSeconds: number | undefined) {
        if (queuedSeconds !== undefined) queueWait.observe({ kind: run.kind }, queuedSeconds);
      },
      ended(run: RunRecord, status: string, seconds: number) {
        runDuration.observe({ kind: run.kind, status }, seconds);
      },
      active(count: number) {
        activeRuns.set(count);
      },
    },
  };
  return made;
}

/** The observer a worker of this process reports to (making the registry on first use). */
export function workerMetrics(): WorkerObserver {
  return processMetrics().worker;
}

/** The Prometheus text format's media type. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** Everything this process measures, with the queue depth and pool state read now. */
export async function metricsText(mesh: Mesh): Promise<string> {
  const metrics = processMetrics();
  const { rows } = await mesh.db.query<{ n: number }>(
    `select count(*)::int as n from runs where status = 'queued'`,
  );
  metrics.queuedRuns.set(rows[0]?.n ?? 0);
  const pool = mesh.db.poolStats?.();
  if (pool) {
    metrics.pool ??= {
      connections: new Gauge({
        name: 'mesh_db_pool_connections',
        help: "The PostgreSQL pool's connections by state (idle or busy).",
        labelNames: ['state'],
        registers: [metrics.registry],
      }),
      waiting: new Gauge({
        name: 'mesh_db_pool_waiting',
        help: 'Queries waiting for a connection of the PostgreSQL pool now.',
        registers: [metrics.registry],
      }),
    };
    metrics.pool.connections.set({ state: 'idle' }, pool.idle);
    metrics.pool.connections.set({ state: 'busy' }, pool.total - pool.idle);
    metrics.pool.waiting.set(pool.waiting);
  }
  return metrics.registry.metrics();
}
