/** The outcome of reading one file of a package: the text, or why it was refused. */
export type FileRead =
  | { readonly kind: 'ok'; readonly text: string }
  | { readonly kind: 'missing' }
  /** `component` is the relative path of the first symlinked component. */
  | { readonly kind: 'symlink'; readonly component: string }
  | { readonly kind: 'not_a_file' }
  | { readonly kind: 'too_large'; readonly bytes: number }
  | { readonly kind: 'encoding' }
  | { readonly kind: 'unreadable'; readonly reason: string };

/**
 * Read access to the files of one package folder. On disk (build time, `mesh tools validate`) the
 * reader refuses symlinks and oversized files; at start-up it serves the texts embedded in the
 * generated catalog, so the process never reads the disk.
 */
export interface PackageFiles {
  /** Reads a file by a relative path that {@link relativePathProblem} already accepted. */
  read(relativePath: string, maxBytes: number): FileRead;
}

/**
 * Why a schema reference is not a plain relative path under the package folder, or undefined when
 * it is one. Refuses absolute paths, `..` (and `.`) segments, backslashes, control characters and
 * empty segments, so the reference cannot name anything outside the folder.
 */
export function relativePathProblem(path: string): string | undefined {
  if (path === '') return 'must be a relative path to a .json file, not empty';
  if (path.length > 255) return 'is longer than 255 characters';
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(path)) return 'must not contain control characters';
  if (path.includes('\\')) return 'must use / as the separator, not \\';
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) {
    return 'must be relative to the package folder, not absolute';
  }
  const segments = path.split('/');
  if (segments.includes('..')) return 'must not contain .. (it would leave the package folder)';
  if (segments.some((s) => s === '' || s === '.')) {
    return 'must not contain empty or . segments';
  }
  if (!path.endsWith('.json')) return 'must name a .json file';
  return undefined;
}

/** Serves files from an in-memory map, e.g. the schema texts embedded in the generated catalog. */
export function embeddedFiles(files: Readonly<Record<string, string>>): PackageFiles {
  return {
    read(relativePath, maxBytes) {
      if (!Object.hasOwn(files, relativePath)) return { kind: 'missing' };
      const text = files[relativePath] ?? '';
      const bytes = Buffer.byteLength(text, 'utf8');
      return bytes > maxBytes ? { kind: 'too_large', bytes } : { kind: 'ok', text };
    },
  };
}
