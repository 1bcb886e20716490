/**
 * A worker process for the effect-tool crash campaign: drives scripted runs of the real
 * mesh.linear, mesh.slack and mesh.github tools against the loopback fakes, their effects through the outbound
 * machinery, and kills itself with SIGKILL at an outbound point when told to: after an effect was
 * recorded and before it was sent, or after it was sent and before its answer was stored.
 */
import { writeSync } from 'node:fs';
import { createGuardedFetch } from '../../src/egress/guarded-fetch.ts';
import { catalog } from '../../src/generated/catalog.ts';
import { loadCatalog } from '../../src/manifest/verify-catalog.ts';
import { createOutbox, type OutboundPoint } from '../../src/outbound/outbox.ts';
import { RunLedger } from '../../src/run/ledger.ts';
import { scriptDriver } from '../../src/run/script-driver.ts';
import { Worker } from '../../src/run/worker.ts';
import { connect } from '../../src/store/connect.ts';
import { outboundStore } from '../../src/store/outbound-events.ts';
import { runStore } from '../../src/store/run-store.ts';
import { services } from '../../src/tool/context.ts';
import { OUTBOX } from '../../src/tool/outbound.ts';

const env = process.env;
const killPoint = env['KILL_POINT'] as OutboundPoint | undefined;
const killNth = Number(env['KILL_NTH'] ?? '0');
const leaseMs = Number(env['LEASE_MS'] ?? '400');

const db = await connect({
  ...(env['DATABASE_URL'] ? { databaseUrl: env['DATABASE_URL'] } : {}),
  ...(env['MESH_HOME'] ? { meshHome: env['MESH_HOME'] } : {}),
  poolSize: 4,
});
const { registry } = loadCatalog(catalog);
const config: Record<string, Record<string, string | boolean>> = {
  'mesh.linear': {
    api_url: env['LINEAR_URL'] ?? '',
    allow_loopback_http: true,
    default_team: 'ENG',
  },
  'mesh.slack': { api_url: env['SLACK_URL'] ?? '', allow_loopback_http: true },
  'mesh.github': { api_base_url: env['GITHUB_URL'] ?? '', allow_loopback_http: true },
};
const secrets: Record<string, string> = {
  linear_api_key: env['LINEAR_KEY'] ?? '',
  slack_token: env['SLACK_TOKEN'] ?? '',
  github_credential: env['GITHUB_TOKEN'] ?? '',
};
let seen = 0;
const outbox = createOutbox({
  store: outboundStore(db),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.min(ms, 20))),
  hooks: {
    at(point, event) {
      if (point !== killPoint) return;
      seen++;
      if (seen === killNth) {
        // Synchronous write: the line reaches the parent before the process dies.
        writeSync(1, `KILL outbound:${point} ${event.callId}\n`);
        process.kill(process.pid, 'SIGKILL');
      }
    },
  },
});
const worker = new Worker({
  ledger: new RunLedger(runStore(db)),
  leaseMs,
  concurrency: 2,
  pollMs: 25,
  // The campaign proves resumption across any number of kills; the cap on how often a run is
  // resumed has its own test (test/run/worker.test.ts).
  maxInterruptions: Number.POSITIVE_INFINITY,
  drivers: [
    scriptDriver({
      registryFor: () => registry,
      runtimeFor: (run, signal) => ({
        agentId: run.agentId,
        runId: run.id,
        provenance: { kind: 'operator', operator: 'crash-test' },
        signal,
        services: services([[OUTBOX, outbox]]),
        configFor: (packageId) => config[packageId] ?? {},
        secretFor: (_packageId, kind) => Promise.resolve(secrets[kind]),
        fetchFor: ({ allowLoopbackHttp }) => createGuardedFetch({ allowLoopbackHttp }),
      }),
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
do {
  await worker.idle();
} while ((await unfinishedRuns()) > 0);
await worker.stop();
await db.close();
writeSync(1, 'DONE\n');
