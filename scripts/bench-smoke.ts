/**
 * bench:smoke — every `bench:*` script of package.json run once at a small size, so a benchmark
 * that breaks is noticed the day it breaks (two broke unnoticed before this ran in CI). A bench
 * fails the smoke run when it exits non-zero, prints NaN, or reports an error count above zero
 * (`errors: N`). A bench script without a size here fails too: a new bench joins the smoke run
 * when it is added. `bench:profile` reads the CPU profile the tenants bench leaves.
 *
 * The figures printed at these sizes mean nothing; only that each bench ran to the end does.
 * The PostgreSQL benches use DATABASE_URL's server, or this machine's (127.0.0.1:5432) when it is
 * not set, and are skipped, saying so, when no server answers. Needs Debian's chromium and
 * bubblewrap (the browser and workspace benches).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The benches that need a PostgreSQL server (each creates its own database there). */
const NEEDS_POSTGRES = new Set(['bench:ledger', 'bench:tenants', 'bench:profile']);

/** This machine's PostgreSQL server, as the README and the tests name it. */
const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether a server answers at `url` (a short connect and `select 1`). */
async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

// Without DATABASE_URL, the local server is used when it answers; without any server, the
// PostgreSQL benches are skipped, said once before anything starts and again at the end.
let noPostgres = false;
if (!process.env['DATABASE_URL']) {
  if (await answers(LOCAL_POSTGRES)) {
    process.env['DATABASE_URL'] = LOCAL_POSTGRES;
    console.log(`bench:smoke: DATABASE_URL is not set; using the server at ${LOCAL_POSTGRES}`);
  } else {
    noPostgres = true;
    console.log(
      `bench:smoke: no PostgreSQL (DATABASE_URL is not set and ${LOCAL_POSTGRES} does not answer): ${[...NEEDS_POSTGRES].join(', ')} are skipped`,
    );
  }
}

const root = join(import.meta.dirname, '..');
const profileDir = mkdtempSync(join(tmpdir(), 'mesh-bench-smoke-'));

/** Each bench's small size: the environment it runs with (and, for one, its arguments). */
const SIZES: Readonly<Record<string, { env?: Record<string, string>; args?: string[] }>> = {
  'bench:executor': { env: { BENCH_PROCESSES: '1' } },
  'bench:ledger': { env: { BENCH_SECONDS: '0.3' } },
  'bench:crawl': { env: { BENCH_PACKAGES: '20', BENCH_WARM_RUNS: '1' } },
  'bench:turn': { env: { BENCH_TURNS: '10', BENCH_LONG_TURNS: '2' } },
  'bench:cli': { env: { BENCH_RUNS: '1' } },
  'bench:mcp': { env: { BENCH_CALLS: '10' } },
  'bench:workspace': { env: { BENCH_PROVISIONS: '2', BENCH_EXECS: '10' } },
  'bench:browser': { env: { BENCH_PROVISIONS: '2', BENCH_ACTIONS: '5' } },
  'bench:progressive': { env: { BENCH_PASSES: '1', BENCH_LARGE: '300' } },
  'bench:stall': { env: { BENCH_ROUNDS: '1' } },
  'bench:tenants': {
    env: {
      BENCH_AGENTS: '3',
      BENCH_MESSAGES: '2',
      BENCH_DELAY_MS: '5',
      BENCH_REPLICAS: '2',
      BENCH_PROFILE_DIR: profileDir,
    },
  },
  // After bench:tenants, which leaves the profile it reads.
  'bench:profile': { args: [profileDir] },
};

/** What in a bench's output makes the smoke run fail; undefined when nothing does. */
function smokeFailure(output: string): string | undefined {
  if (/\bNaN\b/.test(output)) return 'it printed NaN';
  for (const match of output.matchAll(/\berrors?: (\d+)/gi))
    if (Number(match[1]) > 0) return `it reported ${match[1]} errors`;
  if (output.trim() === '') return 'it printed nothing';
  return undefined;
}

function run(
  script: string,
  size: (typeof SIZES)[string],
): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '-s', script, ...(size.args ? ['--', ...size.args] : [])], {
      cwd: root,
      env: { ...process.env, ...size.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), output }));
  });
}

const scripts = Object.keys(
  (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: object }).scripts,
).filter((name) => name.startsWith('bench:') && name !== 'bench:smoke');
const unsized = scripts.filter((name) => !(name in SIZES));
const failures: string[] = unsized.map(
  (name) => `${name}: no smoke size in scripts/bench-smoke.ts`,
);
const ordered = Object.keys(SIZES).filter((name) => scripts.includes(name));
const skipped = noPostgres ? ordered.filter((name) => NEEDS_POSTGRES.has(name)) : [];
const gone = Object.keys(SIZES).filter((name) => !scripts.includes(name));
failures.push(...gone.map((name) => `${name}: sized here, but package.json has no such script`));

try {
  for (const name of ordered) {
    if (skipped.includes(name)) {
      console.log(`skip ${name}: no PostgreSQL`);
      continue;
    }
    const started = performance.now();
    const { code, output } = await run(name, SIZES[name] ?? {});
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    const why = code !== 0 ? `it exited with ${code}` : smokeFailure(output);
    console.log(
      `${why === undefined ? 'ok  ' : 'FAIL'} ${name} (${seconds} s)${why ? `: ${why}` : ''}`,
    );
    if (why !== undefined) {
      failures.push(`${name}: ${why}`);
      console.log(
        output
          .trimEnd()
          .split('\n')
          .slice(-30)
          .map((line) => `    ${line}`)
          .join('\n'),
      );
    }
  }
} finally {
  rmSync(profileDir, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.log(
    `\nbench:smoke: ${failures.length} failed\n${failures.map((f) => `  ${f}`).join('\n')}`,
  );
  process.exit(1);
}
console.log(
  skipped.length === 0
    ? `\nbench:smoke: all ${ordered.length} benches ran`
    : `\nbench:smoke: ${ordered.length - skipped.length} of ${ordered.length} benches ran; skipped for want of PostgreSQL: ${skipped.join(', ')}`,
);
