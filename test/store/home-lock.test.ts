import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acquireHomeLock, readHomeLock } from '../../src/store/home-lock.ts';

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

interface Racer {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly outcome: Promise<string>;
}

function startRacer(home: string): Racer {
  const child = spawn(process.execPath, [racer, home], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  let onReady: () => void = () => undefined;
  let onOutcome: (line: string) => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  const outcome = new Promise<string>((resolve) => (onOutcome = resolve));
  child.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    if (out.includes('READY\n')) onReady();
    const match = /^(WON|LOST \S+)$/m.exec(out);
    if (match?.[1]) onOutcome(match[1]);
  });
  child.on('exit', () => onOutcome(`EXITED ${out.trim()}`));
  return { child, ready, outcome };
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe('the home lock', () => {
  it(`is taken over by exactly one of ${RACERS} processes racing on a stale lock`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const home = join(root, `home-${round}`);
      mkdirSync(home);
      writeFileSync(join(home, 'mesh.lock'), JSON.stringify({ pid: deadPid() }), { mode: 0o600 });
      const racers = Array.from({ length: RACERS }, () => startRacer(home));
      try {
        await Promise.all(racers.map((r) => r.ready));
        const at = Date.now() + 150;
        for (const r of racers) r.child.stdin?.write(`${at}\n`);
        const outcomes = await Promise.all(racers.map((r) => r.outcome));
        expect(outcomes.filter((o) => o === 'WON')).toHaveLength(1);
        expect(outcomes.filter((o) => o !== 'WON')).toEqual(
          Array.from({ length: RACERS - 1 }, () => 'LOST home_locked'),
        );
        const winner = racers[outcomes.indexOf('WON')];
        expect(readHomeLock(home)?.pid).toBe(winner?.child.pid);
        // No takeover file is left behind for the next start to trip on.
        expect(readdirSync(home).filter((f) => f.endsWith('.takeover'))).toEqual([]);
      } finally {
        for (const r of racers) r.child.stdin?.end();
        await Promise.all(racers.map((r) => exited(r.child)));
      }
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
