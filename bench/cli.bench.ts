/**
 * bench:cli — how long the `mesh` command takes, measured in one run:
 *  (a) `mesh --help`;
 *  (b) `mesh agents list` beside a running `mesh serve` (the work goes over its Unix socket);
 *  (c) `mesh agents list` on an existing embedded home with no server (opens PGlite itself);
 * each through the compiled dist/ (what `npm ci` builds) and, for comparison, through tsx on the
 * TypeScript sources (how the binary ran before). Medians of BENCH_RUNS (5) runs; no target is
 * enforced.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';

const root = join(import.meta.dirname, '..');
const RUNS = Number(process.env['BENCH_RUNS'] ?? '5');

execFileSync(process.execPath, [join(root, 'bin', 'build.js')], { stdio: 'inherit' });

function command(mode: 'dist' | 'tsx', args: string[]): string[] {
  return mode === 'dist'
    ? [join(root, 'bin', 'mesh.js'), ...args]
    : ['--import', 'tsx', join(root, 'src', 'cli', 'entry-tsx.ts'), ...args];
}

function envFor(home: string, mode: 'dist' | 'tsx'): NodeJS.ProcessEnv {
  return {
    ...process.env,
    MESH_HOME: home,
    DATABASE_URL: '',
    MESH_DIST: mode === 'dist' ? '1' : '',
  };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function time(mode: 'dist' | 'tsx', home: string, args: string[]): number {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    execFileSync(process.execPath, command(mode, args), { env: envFor(home, mode), stdio: 'pipe' });
    samples.push(performance.now() - t0);
  }
  return median(samples) / 1000;
}

const home = mkdtempSync(join(tmpdir(), 'mesh-bench-cli-'));
try {
  // Create the home once (initdb and migrations), so (c) measures an existing home.
  execFileSync(process.execPath, command('dist', ['agents', 'list']), {
    env: envFor(home, 'dist'),
  });
  const rows: [string, string, number, number][] = [];
  const helpTarget = 0.3;
  rows.push([
    'mesh --help',
    `≤ ${helpTarget} s`,
    time('dist', home, ['--help']),
    time('tsx', home, ['--help']),
  ]);
  rows.push([
    'mesh agents list, no server',
    '≤ 1.5 s',
    time('dist', home, ['agents', 'list']),
    time('tsx', home, ['agents', 'list']),
  ]);
  const server = spawn(process.execPath, command('dist', ['serve', '--port', '0']), {
    env: envFor(home, 'dist'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    server.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (/^URL: /m.test(out)) resolve();
    });
    server.once('exit', (code) => reject(new Error(`mesh serve exited with ${String(code)}`)));
  });
  try {
    rows.push([
      'mesh agents list, beside mesh serve',
      '≤ 0.3 s',
      time('dist', home, ['agents', 'list']),
      time('tsx', home, ['agents', 'list']),
    ]);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
  }
  console.log(`bench:cli  median of ${RUNS} runs; load average ${loadavg()[0]?.toFixed(2)}`);
  for (const [what, target, dist, tsx] of rows) {
    console.log(
      `${what.padEnd(36)} compiled ${dist.toFixed(2)} s (target ${target})   tsx on sources ${tsx.toFixed(2)} s   ${(tsx / dist).toFixed(1)}× faster`,
    );
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
