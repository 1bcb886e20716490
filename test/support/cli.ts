import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { eachLine } from './lines.ts';

const run = promisify(execFile);

/** The real `mesh` binary. */
export const meshBin = join(process.cwd(), 'bin', 'mesh.js');

/**
 * The environment the binary runs in for a test: the embedded database in `home`, and the
 * compiled dist/ the test set-up built (even if a source changes while the tests run).
 */
export function meshEnv(home: string): NodeJS.ProcessEnv {
  return { ...process.env, MESH_HOME: home, DATABASE_URL: '', MESH_DIST: '1' };
}

/**
 * A fresh MESH_HOME copied from the run's template: an embedded database already migrated and an
 * instance key. Copying takes a fraction of a second; initdb and the migrations take many.
 */
export function freshMeshHome(prefix = 'mesh-cli-'): string {
  const home = mkdtempSync(join(tmpdir(), prefix));
  cpSync(inject('meshHomeTemplate'), home, { recursive: true });
  return home;
}

/**
 * Removes a home made by {@link freshMeshHome}. `rmSync` unlinks its thousand-odd files one after
 * another, each unlink waiting on the disk (over a second a home); `rm` spreads them over libuv's
 * threads and takes a fifth of that.
 */
export function removeMeshHome(home: string): Promise<void> {
  return rm(home, { recursive: true, force: true });
}

/** What one run of the real `mesh` binary printed and returned. */
export interface MeshInvocation {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Returns a runner of the real `mesh` binary on the embedded database in `home`. */
export function meshIn(home: string): (...args: string[]) => Promise<MeshInvocation> {
  return meshWith(meshEnv(home));
}

/** Returns a runner of the real `mesh` binary in the environment `env` (a home, a database). */
export function meshWith(env: NodeJS.ProcessEnv): (...args: string[]) => Promise<MeshInvocation> {
  return async (...args) => {
    try {
      const { stdout, stderr } = await run(process.execPath, [meshBin, ...args], { env });
      return { code: 0, stdout, stderr };
    } catch (error) {
      const e = error as { code: number; stdout: string; stderr: string };
      return { code: e.code, stdout: e.stdout, stderr: e.stderr };
    }
  };
}

/** A running `mesh serve`: its process, every line it printed, and a way to wait for one. */
export interface ServeProcess {
  readonly child: ChildProcess;
  readonly lines: string[];
  waitFor(pattern: RegExp): Promise<string>;
  readonly exited: Promise<number | null>;
  /** Sends SIGTERM and resolves with the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs `mesh` in this process (its `main`), on whatever MESH_HOME and DATABASE_URL say: beside a
 * `mesh serve` holding the home, the work goes to the server over its socket.
 */
export async function meshInProcess(
  ...argv: string[]
): Promise<{ code: number; out: string; err: string }> {
  const { main } = await import('../../src/cli/main.ts');
  let out = '';
  let err = '';
  const code = await main(argv, {
    out: (t) => (out += `${t}\n`),
    err: (t) => (err += `${t}\n`),
  });
  return { code, out, err };
}

/** `mesh serve` as `npm start` runs it, on the embedded database in `home`. */
export function serveIn(home: string, ...args: string[]): ServeProcess {
  return serveWith(meshEnv(home), ...args);
}

/**
 * `mesh serve` in the given environment (a replica on PostgreSQL, say). A test's server lives for
 * seconds, not the hours V8's optimizing WebAssembly compiler is there for, so it runs on the
 * baseline compiler alone, as the binary runs every other command (see bin/mesh.js).
 */
export function serveWith(env: NodeJS.ProcessEnv, ...args: string[]): ServeProcess {
  const child = spawn(process.execPath, ['--liftoff-only', meshBin, 'serve', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: (line: string) => void }[] = [];
  const onLine = (line: string) => {
    lines.push(line);
    for (const w of waiters.filter((x) => x.pattern.test(line))) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  };
  eachLine(child.stdout, onLine);
  eachLine(child.stderr, onLine);
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    child,
    lines,
    exited,
    stop() {
      child.kill('SIGTERM');
      return exited;
    },
    waitFor(pattern) {
      const seen = lines.find((l) => pattern.test(l));
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        waiters.push({ pattern, resolve });
        void exited.then((code) =>
          reject(
            new Error(
              `mesh serve exited (${String(code)}) before ${String(pattern)}:\n${lines.join('\n')}`,
            ),
          ),
        );
      });
    },
  };
}

/**
 * Returns a runner of the real `mesh` binary in `env` that answers what it printed (both streams)
 * and fails, with that output, when it exits non-zero: for set-up steps that must work.
 */
export function meshOrFail(env: NodeJS.ProcessEnv): (...args: string[]) => Promise<string> {
  const mesh = meshWith(env);
  return async (...args) => {
    const r = await mesh(...args);
    if (r.code !== 0)
      throw new Error(`mesh ${args.join(' ')} exited ${r.code}: ${r.stdout}${r.stderr}`);
    return r.stdout + r.stderr;
  };
}

/** The databases a test of the binary runs on: PGlite always, PostgreSQL when DATABASE_URL is set. */
export const CLI_DATABASES: readonly ('pglite' | 'postgres')[] = process.env['DATABASE_URL']
  ? ['pglite', 'postgres']
  : ['pglite'];

/**
 * A fresh home for the binary on `database`: the embedded one in the home, or a fresh PostgreSQL
 * database with an instance key of its own. `dispose` removes both.
 */
export async function freshMeshEnv(
  database: 'pglite' | 'postgres',
  prefix: string,
): Promise<{ home: string; env: NodeJS.ProcessEnv; dispose(): Promise<void> }> {
  const home = freshMeshHome(prefix);
  if (database === 'pglite')
    return { home, env: meshEnv(home), dispose: () => removeMeshHome(home) };
  const { freshPostgresUrl } = await import('./postgres.ts');
  const fresh = await freshPostgresUrl();
  const key = join(home, 'instance.key');
  writeFileSync(key, randomBytes(32), { mode: 0o600 });
  return {
    home,
    env: { ...meshEnv(home), DATABASE_URL: fresh.url, MESH_INSTANCE_KEY_FILE: key },
    async dispose() {
      await fresh.drop();
      await removeMeshHome(home);
    },
  };
}
