import {
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
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

/** Reads the lock's holder, or undefined when the home is not locked by a live process. */
export function readHomeLock(home: string): HomeLockInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(join(home, 'mesh.lock'), 'utf8')) as HomeLockInfo;
    return typeof info.pid === 'number' && alive(info.pid) ? info : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Takes the lock on an embedded data directory: PGlite is single-process, and two processes on one
 * data directory corrupt it. A lock left by a dead process is taken over.
 */
export function acquireHomeLock(home: string): { release(): void } {
  mkdirSync(home, { recursive: true });
  const path = join(home, 'mesh.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid }));
      closeSync(fd);
      let released = false;
      return {
        release() {
          if (released) return;
          released = true;
          rmSync(path, { force: true });
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readHomeLock(home);
      if (holder && holder.pid !== process.pid) {
        throw new StoreError(
          'home_locked',
          `the embedded database in ${home} is in use by process ${holder.pid}` +
            (holder.url
              ? ` (serving ${holder.url}); use that server, or stop it first`
              : '; stop it first'),
        );
      }
      rmSync(path, { force: true });
    }
  }
  throw new StoreError('home_locked', `could not lock ${home}`);
}

/**
 * Records what this process serves in the lock it holds on `home` — its URL, and the socket the
 * CLI may use — so a CLI that finds the embedded database busy can reach the server or say where
 * it is. Does nothing when another process holds the lock.
 */
export function recordServing(home: string, serving: { url: string; socket?: string }): void {
  const path = join(home, 'mesh.lock');
  const holder = readHomeLock(home);
  if (holder?.pid !== process.pid) return;
  // Written aside and renamed over the lock, so no reader ever sees a half-written lock.
  const aside = `${path}.${process.pid}.tmp`;
  const fd = openSync(aside, 'w', 0o600);
  writeSync(
    fd,
    JSON.stringify({
      pid: process.pid,
      url: serving.url,
      ...(serving.socket ? { socket: serving.socket } : {}),
    }),
  );
  closeSync(fd);
  renameSync(aside, path);
}
