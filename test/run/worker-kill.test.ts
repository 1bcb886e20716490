import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunLedger } from '../../src/run/ledger.ts';
import { scriptCheckpoint } from '../../src/run/script-driver.ts';
import { Worker } from '../../src/run/worker.ts';
import type { Db } from '../../src/store/db.ts';
import { openPostgres } from '../../src/store/postgres.ts';
import { migrate } from '../../src/store/migrate.ts';
import { runStore } from '../../src/store/run-store.ts';
import { makeAgent } from '../support/run.ts';
import { freshPostgresUrl } from '../support/postgres.ts';

/*
 * A worker process killed with SIGKILL mid-run: its heartbeat stops, and another worker claims the
 * run as soon as the lease lapses (short leases here), under a new epoch. Two processes share one
 * database, so this runs on PostgreSQL only (the embedded database is single-process; the crash
 * campaign covers it there).
 */

const here = dirname(fileURLToPath(import.meta.url));
const LEASE_MS = 400;

describe.skipIf(!process.env['DATABASE_URL'])('a killed worker on postgres', () => {
  let db: Db;
  let url: string;
  let drop: () => Promise<void>;
  let child: string;
  let dir: string;

  beforeAll(async () => {
    const fresh = await freshPostgresUrl();
    url = fresh.url;
    drop = fresh.drop;
    db = await openPostgres({ url });
    await migrate(db);
    mkdirSync(join(here, '..', '..', 'test-output'), { recursive: true });
    // Inside the repository, so the bundle's external packages resolve from node_modules.
    dir = mkdtempSync(join(here, '..', '..', 'test-output', 'worker-kill-'));
    const { build } = await import('esbuild');
    child = join(dir, 'worker.mjs');
    await build({
      entryPoints: [join(here, 'worker-kill-child.ts')],
      outfile: child,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      logLevel: 'silent',
    });
  });
  afterAll(async () => {
    await db.close();
    await drop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('has its run taken over by another worker once its lease lapses', async () => {
    const ledger = new RunLedger(runStore(db));
    const agentId = await makeAgent(db);
    const run = await ledger.createRun({
      agentId,
      kind: 'patient',
      provenance: { kind: 'operator', operator: 'test' },
      budget: {},
      checkpoint: scriptCheckpoint([]),
    });
    const proc = spawn(process.execPath, [child, String(LEASE_MS)], {
      env: { ...process.env, DATABASE_URL: url },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve) => {
      let out = '';
      proc.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes('CLAIMED')) resolve();
      });
    });
    // While it lives, it heartbeats: a claim now finds nothing.
    expect(await ledger.claim('probe', LEASE_MS)).toBeUndefined();
    proc.kill('SIGKILL');
    await new Promise((resolve) => proc.once('exit', resolve));

    let driven = 0;
    const survivor = new Worker({
      ledger,
      leaseMs: LEASE_MS,
      pollMs: 20,
      drivers: [
        {
          kind: 'patient',
          drive: async () => {
            driven++;
            return { status: 'succeeded', reason: null };
          },
        },
      ],
    });
    survivor.start();
    await new Promise<void>((resolve) => {
      const check = async (): Promise<void> => {
        const current = await ledger.run(run.id);
        if (current?.status === 'succeeded') return resolve();
        setTimeout(() => void check(), 50);
      };
      void check();
    });
    await survivor.stop();
    expect(driven).toBe(1);
    const { rows } = await db.query<{ epoch: number }>(
      'select lease_epoch as epoch from runs where id = $1',
      [run.id],
    );
    expect(rows[0]?.epoch).toBe(2);
  }, 30_000);
});
