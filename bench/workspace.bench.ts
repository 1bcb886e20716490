/**
 * bench:workspace — the local backend's provisioning time (a bubblewrap sandbox with its agent
 * and egress proxy, ready for commands) p50/p99, and the overhead of `workspace_exec`'s path
 * (the sandbox agent's socket round trip, the sandbox's own process start) against spawning the
 * same command directly on the host, both measured in this run.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_LIMITS } from '../src/exec/backend.ts';
import { localBackend } from '../src/exec/backends/local.ts';
import { median, percentile } from './stats.ts';

const PROVISIONS = Number(process.env['BENCH_PROVISIONS'] ?? 30);
const EXECS = Number(process.env['BENCH_EXECS'] ?? 200);
const COMMAND = 'true';

const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-ws-'));
const backend = localBackend({ directory: join(dir, 'w') });
const spec = () => ({
  workspaceId: randomUUID(),
  runId: randomUUID(),
  agentId: randomUUID(),
  egress: [],
  credentials: {},
  limits: DEFAULT_LIMITS,
});

function direct(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', COMMAND], { stdio: 'ignore' });
    child.once('error', reject);
    child.once('close', () => resolve());
  });
}

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const f = (n: number) => n.toFixed(2);

try {
  // Provisioning, then release, one at a time.
  const provision: number[] = [];
  for (let i = 0; i < PROVISIONS; i++) {
    const start = process.hrtime.bigint();
    const ws = await backend.provision(spec());
    provision.push(ms(start));
    await ws.release();
  }

  const ws = await backend.provision(spec());
  const viaWorkspace: number[] = [];
  const viaSpawn: number[] = [];
  for (let i = 0; i < 10; i++) {
    await ws.exec({ command: COMMAND, timeoutMs: 10_000 });
    await direct();
  }
  // Interleaved, so load on the machine falls on both alike.
  for (let i = 0; i < EXECS; i++) {
    let start = process.hrtime.bigint();
    await ws.exec({ command: COMMAND, timeoutMs: 10_000 });
    viaWorkspace.push(ms(start));
    start = process.hrtime.bigint();
    await direct();
    viaSpawn.push(ms(start));
  }
  await ws.release();

  const wp50 = median([...viaWorkspace]);
  const sp50 = median([...viaSpawn]);
  console.log(
    `bench:workspace (local bubblewrap backend, ${PROVISIONS} provisions, ${EXECS} execs of \`${COMMAND}\`)`,
  );
  console.log(
    `provisioning: p50 ${f(median([...provision]))} ms, p99 ${f(percentile([...provision], 99))} ms`,
  );
  console.log(`workspace exec: p50 ${f(wp50)} ms, p99 ${f(percentile([...viaWorkspace], 99))} ms`);
  console.log(`direct spawn:   p50 ${f(sp50)} ms, p99 ${f(percentile([...viaSpawn], 99))} ms`);
  console.log(
    `workspace_exec overhead: +${f(wp50 - sp50)} ms p50 per command (x${(wp50 / sp50).toFixed(2)} of a direct spawn)`,
  );
} finally {
  await backend.close();
  rmSync(dir, { recursive: true, force: true });
}
