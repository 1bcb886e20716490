import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  linkSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { ownerOnly } from './home-dir.ts';
import { StoreError } from './db.ts';

/** Who holds `$MESH_HOME`'s embedded database. */
export interface HomeLockInfo {
  readonly pid: number;
  /** The URL a `mesh serve` holding the home serves. */
  readonly url?: string;
  /** The Unix socket on which that server answers the CLI. */
  readonly socket?: string;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock file's raw content, or undefined when it does not exist (or cannot be read). */
function readRaw(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The live holder named by a lock file's content, or undefined when it names a dead one. */
function liveHolder(raw: string): HomeLockInfo | undefined {
  try {
    const info = JSON.parse(raw) as HomeLockInfo;
    return typeof info.pid === 'number' && alive(info.pid) ? info : undefined;
  } catch {
    return undefined;
  }
}

/** Reads the lock's holder, or undefined when the home is not locked by a live process. */
export function readHomeLock(home: string): HomeLockInfo | undefined {
  const raw = readRaw(join(home, LOCK_FILE_NAME));
  return raw === undefined ? undefined : liveHolder(raw);
}

const LOCK_FILE_NAME = 'mesh.lock';
/** How deep takeovers of takeovers go (each level needs a taker that died mid-takeover). */
const MAX_TAKEOVER_DEPTH = 8;
/** How long to wait on a live process's takeover, which takes microseconds, before refusing. */
const TAKEOVER_WAIT_MS = 2_000;

function pause(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** A file holding `content`, written and closed, under a name no other process uses. */
function writeAside(path: string, content: string): string {
  const aside = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(aside, 'wx', 0o600);
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return aside;
}

type Claim = { readonly kind: 'held' } | { readonly kind: 'busy'; readonly holder: HomeLockInfo };

/**
 * Claims the lock file `path` for this process, with `content` (which names this process and a
 * unique token). The file appears whole or not at all: the content is written aside and
 * hard-linked into place, and link(2) fails when the name exists. A file naming a dead process
 * is replaced only by the one process that holds its takeover file — `path.<digest of the stale
 * content>.takeover`, itself claimed by this same procedure — and only after it has re-read the
 * lock and found the same stale content. Two racing takers of one stale lock meet on one takeover
 * file; a taker that finds the lock changed under it starts over and sees the new holder.
 */
function claim(path: string, content: string, depth: number): Claim {
  if (depth > MAX_TAKEOVER_DEPTH) {
    throw new StoreError('home_locked', `could not lock ${path}: too many interrupted takeovers`);
  }
  const aside = writeAside(path, content);
  const deadline = Date.now() + TAKEOVER_WAIT_MS;
  try {
    for (;;) {
      try {
        linkSync(aside, path);
        return { kind: 'held' };
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const stale = readRaw(path);
      if (stale === undefined) {
        // Released meanwhile: try again (a name that exists but cannot be read ends the wait).
        if (Date.now() > deadline) throw new StoreError('home_locked', `could not lock ${path}`);
        continue;
      }
      const holder = liveHolder(stale);
      // A lock this very process left (it never released it) is stale to it, as it always was.
      if (holder && holder.pid !== process.pid) return { kind: 'busy', holder };
      const digest = createHash('sha256').update(stale).digest('hex').slice(0, 16);
      const takeoverPath = `${path}.${digest}.takeover`;
      const takeover = claim(takeoverPath, content, depth + 1);
      if (takeover.kind === 'held') {
        try {
          // Under the takeover file nobody else may replace this stale content.
          if (readRaw(path) === stale) {
            renameSync(aside, path);
            return { kind: 'held' };
          }
        } finally {
          rmSync(takeoverPath, { force: true });
        }
      } else if (Date.now() > deadline) {
        return takeover;
      } else {
        pause(2); // a live process is taking over: it will hold the lock in a moment
      }
    }
  } finally {
    rmSync(aside, { force: true });
  }
}

/**
 * Takes the lock on an embedded data directory: PGlite is single-process, and two processes on one
 * data directory corrupt it. A lock left by a dead process is taken over, by exactly one of any
 * number of processes starting at the same moment (see docs/decisions/0015-home-lock-takeover.md).
 */
export function acquireHomeLock(home: string): { release(): void } {
  ownerOnly(home);
  const path = join(home, LOCK_FILE_NAME);
  const content = JSON.stringify({ pid: process.pid, token: randomBytes(8).toString('hex') });
  const claimed = claim(path, content, 0);
  if (claimed.kind === 'busy') {
    const { holder } = claimed;
    throw new StoreError(
      'home_locked',
      `the embedded database in ${home} is in use by process ${holder.pid}` +
        (holder.url
          ? ` (serving ${holder.url}); use that server, or stop it first`
          : '; stop it first'),
    );
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      // Only while the lock is still ours: a lock this process lost is not removed.
      if (readHomeLock(home)?.pid === process.pid) rmSync(path, { force: true });
    },
  };
}

/**
 * Records what this process serves in the lock it holds on `home` — its URL, and the socket the
 * CLI may use — so a CLI that finds the embedded database busy can reach the server or say where
 * it is. Does nothing when another process holds the lock.
 */
export function recordServing(home: string, serving: { url: string; socket?: string }): void {
  const path = join(home, LOCK_FILE_NAME);
  const raw = readRaw(path);
  const holder = raw === undefined ? undefined : liveHolder(raw);
  if (raw === undefined || holder?.pid !== process.pid) return;
  const { token } = JSON.parse(raw) as { token?: string };
  // Written aside and renamed over the lock, so no reader ever sees a half-written lock.
  const aside = writeAside(
    path,
    JSON.stringify({
      pid: process.pid,
      ...(token ? { token } : {}),
      url: serving.url,
      ...(serving.socket ? { socket: serving.socket } : {}),
    }),
  );
  renameSync(aside, path);
}
