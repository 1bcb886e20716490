import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/** A package folder read whole, or the first thing in it that a package may not hold. */
export type FolderRead =
  | { readonly ok: true; readonly files: Map<string, Uint8Array> }
  | {
      readonly ok: false;
      readonly reason: 'symlink' | 'special_file' | 'too_many_files';
      /** The offending entry's relative path (empty for too_many_files). */
      readonly path: string;
    };

/**
 * Every regular file under a folder, by relative path (`/`-separated, NFC), in a stable order: the
 * file set a package digest and an archive cover. A symbolic link is refused, never followed;
 * so is a device, socket or pipe, and a folder of more than `maxFiles` files.
 */
export function readFolder(dir: string, maxFiles: number): FolderRead {
  const files = new Map<string, Uint8Array>();
  const walk = (folder: string): FolderRead | undefined => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const stat = lstatSync(path);
      const rel = relative(dir, path).split(sep).join('/').normalize('NFC');
      if (stat.isSymbolicLink()) return { ok: false, reason: 'symlink', path: rel };
      if (stat.isDirectory()) {
        const refused = walk(path);
        if (refused) return refused;
      } else if (stat.isFile()) files.set(rel, readFileSync(path));
      else return { ok: false, reason: 'special_file', path: rel };
      if (files.size > maxFiles) return { ok: false, reason: 'too_many_files', path: '' };
    }
    return undefined;
  };
  return walk(dir) ?? { ok: true, files };
}
