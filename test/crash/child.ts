/**
 * A worker process for the crash test. It drives scripted runs and, when told to, kills itself
 * with SIGKILL at an injected point on a call's path: no cleanup, no lease given back.
 */
import { writeSync } from 'node:fs';
import { connect } from '../../src/store/connect.ts';
import { RunLedger } from '../../src/run/ledger.ts';
import { runStore } from '../../src/store/run-store.ts';
import { scriptDriver } from '../../src/run/script-driver.ts';
import type { CallPoint } from '../../src/run/tool-step.ts';
import { Worker } from '../../src/run/worker.ts';
import { services } from '../../src/tool/context.ts';
import { crashRegistry } from './tools.ts';

const env = process.env;
const counterUrl = env['COUNTER_URL'] ?? '';
const killPoint = env['KILL_POINT'] as CallPoint | undefined;
const killNth = Number(env['KILL_NTH'] ?? '0');
const leaseMs = Number(env['LEASE_MS'] ?? '400');

const db = await connect({
  ...(env['DATABASE_URL'] ? { databaseUrl: env['DATABASE_URL'] } : {}),
  ...(env['MESH_HOME'] ? { meshHome: env['MESH_HOME'] } : {}),
  poolSize: 6,
  // A child drives the runs there are and exits: a small embedded buffer pool starts faster.
  oneShot: true,
});
const registry = crashRegistry(counterUrl);
const ledger = new RunLedger(runStore(db));
let seen = 0;
const worker = new Worker({
  ledger,
  leaseMs,
  concurrency: 3,
  pollMs: 25,
  // The campaign proves resumption across any number of kills; the cap on how often a run is
  // resumed has its own tests (test/run/interrupted-runs.test.ts sets MAX_INTERRUPTIONS).
  maxInterruptions: Number(env['MAX_INTERRUPTIONS'] ?? Number.POSITIVE_INFINITY),
  drivers: [
    scriptDriver({
      registryFor: () => registry,
      runtimeFor: (run, signal) => ({
        agentId: run.agentId,
        runId: run.id,
        provenance: { kind: 'operator', operator: 'crash-test' },
        signal,
        services: services([]),
        configFor: () => ({}),
      }),
      hooks: {
        at(point, call) {
          if (point !== killPoint) return;
          seen++;
          if (seen === killNth) {
            // Synchronous write: the line reaches the parent before the process dies.
            writeSync(1, `KILL ${point} ${call.id}\n`);
            process.kill(process.pid, 'SIGKILL');
          }
        },
      },
    }),
  ],
});

async function unfinishedRuns(): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `select count(*)::int as n from runs where status not in ('succeeded', 'failed', 'budget_exhausted')`,
  );
  return rows[0]?.n ?? 1;
}

worker.start();
writeSync(1, 'READY\n');
// Idle means nothing was claimable; a run may still be leased by a sibling (or by a killed
// predecessor until its lease expires), so the child leaves only when every run has ended.
do {
  await worker.idle();
} while ((await unfinishedRuns()) > 0);
await worker.stop();
await db.close();
writeSync(1, 'DONE\n');
