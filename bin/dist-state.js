// Whether dist/ was built from the sources as they are now. Shared by the binary (which falls back
// to compiling the sources on the fly when it was not) and the build (which skips a fresh one).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The folders and files the compiled command is built from. */
export const SOURCES = ['src', 'tools', 'examples', 'package.json', 'package-lock.json'];

/** The record the build writes last, once every output file is in place. */
export const STAMP = 'build.json';

function newestMtime(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return path.endsWith('.test.ts') ? 0 : stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** The newest modification time among the sources under `root`. */
export function sourcesMtime(root) {
  return Math.max(...SOURCES.map((s) => newestMtime(join(root, s))));
}

/** True when `root`/dist holds a complete build started after the last change to the sources. */
export function distIsFresh(root) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, 'dist', STAMP), 'utf8'));
  } catch {
    return false;
  }
  return typeof stamp.startedAt === 'number' && sourcesMtime(root) < stamp.startedAt;
}
