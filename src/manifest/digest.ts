import { createHash } from 'node:crypto';

/** sha256 of a text's UTF-8 bytes, hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** sha256 (hex) of each file of a package, by its relative path (`/`-separated, NFC). */
export type FileHashes = Readonly<Record<string, string>>;

/** Orders paths and names by their UTF-16 code units: the same on every machine and locale. */
export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The hashes of a file set given by path and bytes (a folder read whole, an archive's entries). */
export function fileHashes(files: ReadonlyMap<string, Uint8Array>): FileHashes {
  const out: Record<string, string> = {};
  for (const [path, bytes] of files) out[path] = createHash('sha256').update(bytes).digest('hex');
  return out;
}

/**
 * The one content digest of a package, used by the catalog, run steps' pins, installs and signed
 * archives alike: sha256 over the package's whole normalized file set (manifest.toml, schemas,
 * SKILL.md, handlers.ts, hooks.ts and every other file in its folder), so the digest names the
 * code that ran, and a folder, its catalog entry and its archive have the same one.
 *
 * Framing (v2): the line `mesh-package-digest-v2`, then per file in byte order of its path, the
 * path as a JSON string, a space, the file's sha256 in hex and a newline. A JSON string holds no
 * raw newline, so the framing is unambiguous; hashing per file lets the generated catalog carry a
 * file it does not embed (handlers.ts is compiled in, not kept as text) by its hash alone.
 */
export function packageDigest(files: FileHashes): string {
  const hash = createHash('sha256').update('mesh-package-digest-v2\n', 'utf8');
  for (const path of Object.keys(files).sort(byteOrder))
    hash.update(`${JSON.stringify(path)} ${files[path] ?? ''}\n`, 'utf8');
  return hash.digest('hex');
}
