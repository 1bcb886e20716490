import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireHomeLock, readHomeLock } from '../../src/store/home-lock.ts';
import { eachLine } from '../support/lines.ts';

/*
 * The embedded database's home lock when many processes start at the same moment on a lock a
 * dead process left: exactly one takes it over, the others are refused naming the holder.
 */

const here = dirname(fileURLToPath(import.meta.url));
const RACERS = 12;
const ROUNDS = 4;

/** The pid of a process that has exited: what a SIGKILLed server leaves in its lock. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
  return Number(child.stdout.toString());
}

let racer: string;
let root: string;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'mesh-home-lock-'));
  // Bundled once: twelve plain .mjs processes start together far faster than under a TS loader.
  const { build } = await import('esbuild');
  racer = join(root, 'racer.mjs');
  await build({
    entryPoints: [join(here, 'home-lock-racer.ts')],
    outfile: racer,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    logLevel: 'silent',
  });
});

afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A racer process: it answers each line it is sent with one line (READY first of all). */
interface Racer {
  readonly child: ChildProcess;
  /** Sends a line and resolves with the next line the racer prints. */
  send(line: string): Promise<string>;
  readonly ready: Promise<string>;
}

function startRacer(): Racer {
  const child = spawn(process.execPath, [racer], { stdio: ['pipe', 'pipe', 'inherit'] });
  const replies: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  const next = () =>
    new Promise<string>((resolve) => {
      const line = replies.shift();
      if (line === undefined) waiting.push(resolve);
      else resolve(line);
    });
  eachLine(child.stdout, (line) => {
    const waiter = waiting.shift();
    if (waiter) waiter(line);
    else replies.push(line);
  });
  child.on('exit', () => {
    for (const waiter of waiting.splice(0)) waiter('EXITED');
  });
  return {
    child,
    ready: next(),
    send(line) {
      child.stdin?.write(`${line}\n`);
      return next();
    },
  };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('the home lock', () => {
  it(`is taken over by exactly one of ${RACERS} processes racing on a stale lock`, async () => {
    // The same racers serve every round, each on a home of its own: a process that takes or is
    // refused one home's lock keeps nothing that bears on another's, and starting 12 processes
    // once instead of every round saves seconds of the suite.
    const racers = Array.from({ length: RACERS }, () => startRacer());
    try {
      expect(await Promise.all(racers.map((r) => r.ready))).toEqual(
        Array.from({ length: RACERS }, () => 'READY'),
      );
      for (let round = 0; round < ROUNDS; round++) {
        const home = join(root, `home-${round}`);
        mkdirSync(home);
        writeFileSync(join(home, 'mesh.lock'), JSON.stringify({ pid: deadPid() }), {
          mode: 0o600,
        });
        const start = JSON.stringify({ home, at: Date.now() + 150 });
        const outcomes = await Promise.all(racers.map((r) => r.send(start)));
        expect(outcomes.filter((o) => o === 'WON')).toHaveLength(1);
        expect(outcomes.filter((o) => o !== 'WON')).toEqual(
          Array.from({ length: RACERS - 1 }, () => 'LOST home_locked'),
        );
        const winner = racers[outcomes.indexOf('WON')];
        expect(readHomeLock(home)?.pid).toBe(winner?.child.pid);
        // No takeover file is left behind for the next start to trip on.
        expect(readdirSync(home).filter((f) => f.endsWith('.takeover'))).toEqual([]);
        expect(await winner?.send('release')).toBe('RELEASED');
        expect(readHomeLock(home)).toBeUndefined();
      }
    } finally {
      for (const r of racers) r.child.stdin?.end();
      await Promise.all(racers.map((r) => exited(r.child)));
    }
  }, 60_000);

  it('takes over a lock whose taker died holding the takeover file', () => {
    const home = join(root, 'interrupted');
    mkdirSync(home);
    const stale = JSON.stringify({ pid: deadPid() });
    writeFileSync(join(home, 'mesh.lock'), stale, { mode: 0o600 });
    const digest = createHash('sha256').update(stale).digest('hex').slice(0, 16);
    const takeover = join(home, `mesh.lock.${digest}.takeover`);
    writeFileSync(takeover, JSON.stringify({ pid: deadPid(), token: 't' }), { mode: 0o600 });
    const lock = acquireHomeLock(home);
    try {
      expect(readHomeLock(home)?.pid).toBe(process.pid);
    } finally {
      lock.release();
    }
    expect(readHomeLock(home)).toBeUndefined();
    expect(existsSync(takeover)).toBe(false);
  });
});
