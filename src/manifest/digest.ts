import { createHash } from 'node:crypto';

/** sha256 of a text's UTF-8 bytes, hex. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** The files whose content a package digest covers. */
export interface PackageContent {
  readonly manifestText: string;
  readonly schemaFiles: Readonly<Record<string, string>>;
  readonly skillText?: string;
}

function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * The content digest grants and audit records pin to: sha256 over every file the package
 * declares, so a changed schema file changes the digest even when manifest.toml did not change.
 * Framing (v1): the line `mesh-package-digest-v1`, then for manifest.toml, each schema file in
 * byte order of its path, and SKILL.md when present: `<path>\n<utf-8 byte length>\n<content>\n`.
 * The length prefix makes the framing unambiguous.
 */
export function packageDigest(content: PackageContent): string {
  const hash = createHash('sha256').update('mesh-package-digest-v1\n', 'utf8');
  const add = (path: string, text: string) => {
    hash.update(`${path}\n${Buffer.byteLength(text, 'utf8')}\n`, 'utf8');
    hash.update(text, 'utf8');
    hash.update('\n', 'utf8');
  };
  add('manifest.toml', content.manifestText);
  for (const path of Object.keys(content.schemaFiles).sort(byteOrder)) {
    add(path, content.schemaFiles[path] ?? '');
  }
  if (content.skillText !== undefined) add('SKILL.md', content.skillText);
  return hash.digest('hex');
}
