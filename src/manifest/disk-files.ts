import { closeSync, constants, fstatSync, lstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import type { FileRead, PackageFiles } from './package-files.ts';

const decoder = new TextDecoder('utf-8', { fatal: true });

function errnoOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error
    ? String(error.code)
    : undefined;
}

/**
 * Reads `relativePath` under `root` the way a package file must be read: every component is
 * checked with lstat (a symlink anywhere on the path is refused, not followed), the final file is
 * opened with O_NOFOLLOW and its size is checked on the open descriptor before a byte is read,
 * and the content must be valid UTF-8.
 */
export function readPackageFile(root: string, relativePath: string, maxBytes: number): FileRead {
  const components = relativePath.split('/');
  let current = root;
  for (let i = 0; i < components.length; i++) {
    current = join(current, components[i] ?? '');
    let stats;
    try {
      stats = lstatSync(current);
    } catch (error) {
      const code = errnoOf(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' };
      return { kind: 'unreadable', reason: code ?? 'unknown error' };
    }
    if (stats.isSymbolicLink()) {
      return { kind: 'symlink', component: components.slice(0, i + 1).join('/') };
    }
    const last = i === components.length - 1;
    if (!last && !stats.isDirectory()) return { kind: 'missing' };
    if (last && !stats.isFile()) return { kind: 'not_a_file' };
  }
  let fd: number;
  try {
    fd = openSync(current, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = errnoOf(error);
    // ELOOP: the file was replaced by a symlink after lstat.
    if (code === 'ELOOP') return { kind: 'symlink', component: relativePath };
    return { kind: 'unreadable', reason: code ?? 'unknown error' };
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) return { kind: 'not_a_file' };
    if (stats.size > maxBytes) return { kind: 'too_large', bytes: stats.size };
    const buffer = Buffer.alloc(stats.size);
    let offset = 0;
    while (offset < buffer.length) {
      const n = readSync(fd, buffer, offset, buffer.length - offset, offset);
      if (n === 0) break;
      offset += n;
    }
    try {
      return { kind: 'ok', text: decoder.decode(buffer.subarray(0, offset)) };
    } catch {
      return { kind: 'encoding' };
    }
  } finally {
    closeSync(fd);
  }
}

/** Package files read from a folder on disk, with the rules of {@link readPackageFile}. */
export function diskFiles(root: string): PackageFiles {
  return { read: (relativePath, maxBytes) => readPackageFile(root, relativePath, maxBytes) };
}
