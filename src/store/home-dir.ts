import { chmodSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/*
 * MESH_HOME on disk is its owner's alone: it holds the embedded database (whose files and WAL
 * carry conversations), the instance key and the CLI's socket.
 */

/**
 * Makes `home` (created if need be) readable by its owner only: it holds the embedded database,
 * whose files and WAL carry conversations, and the instance key. A home made before (or by hand,
 * or by a process that was given its key file elsewhere) is tightened too.
 */
export function ownerOnly(home: string): void {
  mkdirSync(home, { recursive: true, mode: 0o700 });
  chmodSync(home, 0o700);
}

/**
 * Makes a folder and everything in it owner-only (folders 0700, files 0600), when the folder
 * itself is not yet: the embedded database writes its files with the process's umask. One stat
 * when it already is, so opening the database stays cheap.
 */
export function ownerOnlyTree(dir: string): void {
  if (!existsSync(dir) || (statSync(dir).mode & 0o077) === 0) return;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isDirectory()) chmodSync(path, 0o700);
    else if (entry.isFile()) chmodSync(path, 0o600);
  }
  chmodSync(dir, 0o700);
}
