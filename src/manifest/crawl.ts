import { lstatSync, readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { matchBindings } from './bindings.ts';
import { diagnostic, type Diagnostic } from './diagnostic.ts';
import { byteOrder, fileHashes, type FileHashes } from './digest.ts';
import { diskFiles, readPackageFile } from './disk-files.ts';
import { readFolder } from './folder-files.ts';
import type { ExportDiscovery } from './export-discovery.ts';
import type { FileRead } from './package-files.ts';
import type { ToolPackage } from './package-manifest.ts';
import { checkPackageSet } from './package-set.ts';
import { readPackage, type ReadOptions } from './read-package.ts';
import { SchemaPool } from './schema-pool.ts';
import { ARCHIVE_LIMITS } from './archive/archive-format.ts';
import { PACKAGE_FOLDER_PATTERN, PACKAGE_LIMITS } from './versioning.ts';

/** The exports of a package's handlers.ts or hooks.ts; undefined when the file does not exist. */
export type DiscoveredExports = readonly string[] | undefined;

/** One package folder as found on disk: its raw texts, its exports, and how it read. */
export interface CrawledPackage {
  readonly folder: string;
  readonly displayRoot: string;
  /** undefined when manifest.toml could not be read at all. */
  readonly manifestText: string | undefined;
  /** Schema files the manifest referenced that could be read. */
  readonly schemaFiles: Readonly<Record<string, string>>;
  readonly skillText: string | undefined;
  readonly handlerExports: DiscoveredExports;
  readonly hookExports: DiscoveredExports;
  /** The validated package, when it had no diagnostics of its own. */
  readonly package: ToolPackage | undefined;
}

/** Everything a crawl of a tools/ directory found. */
export interface CrawlResult {
  readonly packages: readonly CrawledPackage[];
  readonly diagnostics: readonly Diagnostic[];
  /** Folders without a manifest.toml, which are not packages. */
  readonly skipped: readonly string[];
  /** False when no export discovery was given: handler bindings were not compared. */
  readonly bindingsChecked: boolean;
}

/** How a crawl reads and reports. */
export interface CrawlOptions extends Omit<ReadOptions, 'pool'> {
  /** How `dir` is shown in diagnostics (default: `dir` itself). */
  readonly displayRoot?: string;
  /** Reads handlers.ts / hooks.ts exports to check bindings; omit to skip that check. */
  readonly discover?: ExportDiscovery;
}

/** Maps a failed read of a whole file (manifest, SKILL.md, handlers) to a diagnostic. */
function readRefusal(
  read: Exclude<FileRead, { kind: 'ok' }>,
  file: string,
  limit: number,
  pkg: string,
  tooLarge: Diagnostic['code'],
): Diagnostic {
  const at = (code: Diagnostic['code'], message: string) =>
    diagnostic(code, file, '', message, { package: pkg });
  switch (read.kind) {
    case 'missing':
      return at('file_unreadable', 'disappeared while it was being read');
    case 'symlink':
      return at(
        'package_symlink',
        `goes through the symlink ${read.component}; package files may not be symlinks`,
      );
    case 'not_a_file':
      return at('file_unreadable', 'is not a regular file');
    case 'too_large':
      return at(tooLarge, `is ${read.bytes} bytes; the limit is ${limit} (refused before parsing)`);
    case 'encoding':
      return at('file_encoding', 'is not valid UTF-8');
    case 'unreadable':
      return at('file_unreadable', `cannot be read: ${read.reason}`);
    default: {
      const never: never = read;
      throw new Error(`unknown read outcome ${JSON.stringify(never)}`);
    }
  }
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/** Reads an optional file of the package; `undefined` text when it does not exist. */
function optionalText(
  root: string,
  name: string,
  limit: number,
  file: string,
  pkg: string,
  tooLarge: Diagnostic['code'],
  out: Diagnostic[],
): { present: boolean; text: string | undefined } {
  if (!exists(join(root, name))) return { present: false, text: undefined };
  const read = readPackageFile(root, name, limit);
  if (read.kind === 'ok') return { present: true, text: read.text };
  out.push(readRefusal(read, file, limit, pkg, tooLarge));
  return { present: true, text: undefined };
}

/** Why a check threw, for the operator; never the error's own text (it may quote the input). */
function failureReason(error: unknown): string {
  return error instanceof RangeError
    ? 'it nests too deeply for the checker'
    : 'the checker failed on it';
}

function discoverIn(
  root: string,
  name: string,
  displayRoot: string,
  pkg: string,
  discover: ExportDiscovery,
  out: Diagnostic[],
): DiscoveredExports {
  const file = `${displayRoot}/${name}`;
  const source = optionalText(
    root,
    name,
    PACKAGE_LIMITS.maxSourceBytes,
    file,
    pkg,
    'binding_source_unsupported',
    out,
  );
  if (!source.present) return undefined;
  if (source.text === undefined) return [];
  let found: ReturnType<ExportDiscovery>;
  try {
    found = discover(source.text, file);
  } catch (error) {
    out.push(
      diagnostic(
        'binding_source_unsupported',
        file,
        '',
        `could not be parsed: ${failureReason(error)}`,
        { package: pkg },
      ),
    );
    return [];
  }
  for (const problem of found.problems) {
    out.push(diagnostic('binding_source_unsupported', file, '', problem, { package: pkg }));
  }
  return found.names;
}

/**
 * The hashes of every file in a package folder, for its digest; undefined (with a diagnostic)
 * when the folder holds what a package may not: a symlink, a special file, too many files.
 */
function folderHashes(
  root: string,
  shown: string,
  pkg: string,
  out: Diagnostic[],
): FileHashes | undefined {
  const read = readFolder(root, ARCHIVE_LIMITS.maxFiles);
  if (read.ok) return fileHashes(read.files);
  const file = read.path === '' ? shown : `${shown}/${read.path}`;
  const at = (code: Diagnostic['code'], message: string) =>
    out.push(diagnostic(code, file, '', message, { package: pkg }));
  if (read.reason === 'symlink') at('package_symlink', 'is a symlink; package files may not be');
  else if (read.reason === 'special_file') at('file_unreadable', 'is not a regular file');
  else at('file_unreadable', `holds more than ${ARCHIVE_LIMITS.maxFiles} files`);
  return undefined;
}

function crawlFolder(
  dir: string,
  folder: string,
  displayRoot: string,
  options: CrawlOptions,
  pool: SchemaPool,
  out: Diagnostic[],
): CrawledPackage {
  const root = join(dir, folder);
  const shown = `${displayRoot}/${folder}`;
  const manifest = readPackageFile(root, 'manifest.toml', PACKAGE_LIMITS.maxManifestBytes);
  const skillFile = `${shown}/SKILL.md`;
  const skill = optionalText(
    root,
    'SKILL.md',
    PACKAGE_LIMITS.maxSkillBytes,
    skillFile,
    folder,
    'skill_too_large',
    out,
  );
  let manifestText: string | undefined;
  let schemaFiles: Readonly<Record<string, string>> = {};
  let pkg: ToolPackage | undefined;
  const before = out.length;
  const walked: Diagnostic[] = [];
  const hashes = folderHashes(root, shown, folder, walked);
  if (manifest.kind === 'ok') {
    manifestText = manifest.text;
    const result = readPackage(
      {
        folder,
        displayRoot: shown,
        manifestText,
        files: diskFiles(root),
        ...(hashes === undefined ? {} : { fileHashes: hashes }),
        ...(skill.text === undefined ? {} : { skillText: skill.text }),
      },
      { ...options, pool },
    );
    if (result.ok) {
      schemaFiles = result.package.schemaFiles;
      // A SKILL.md that could not be read, or a file set that could not, leaves it incomplete.
      if (!(skill.present && skill.text === undefined) && hashes !== undefined)
        pkg = result.package;
    } else {
      schemaFiles = result.schemaFiles;
      out.push(...result.diagnostics);
    }
  } else {
    out.push(
      readRefusal(
        manifest,
        `${shown}/manifest.toml`,
        PACKAGE_LIMITS.maxManifestBytes,
        folder,
        'manifest_too_large',
      ),
    );
  }
  // A symlink the schema reader already named is not named twice.
  if (!out.slice(before).some((d) => d.code.endsWith('_symlink'))) out.push(...walked);
  const name = pkg?.manifest.package.id ?? folder;
  const discover = options.discover;
  const handlerExports = discover && discoverIn(root, 'handlers.ts', shown, name, discover, out);
  const hookExports = discover && discoverIn(root, 'hooks.ts', shown, name, discover, out);
  return {
    folder,
    displayRoot: shown,
    manifestText,
    schemaFiles,
    skillText: skill.text,
    handlerExports,
    hookExports,
    package: pkg,
  };
}

/**
 * Crawls a tools/ directory on disk: each folder holding a manifest.toml is a package. Reads every
 * manifest, the schema files it references and SKILL.md with the package-file rules (no symlinks,
 * size caps, UTF-8), validates them, checks ids and tool names across packages, and, given an
 * export discovery, the 1:1 match with the exports of handlers.ts and hooks.ts. A missing
 * directory crawls as empty. Never executes package code.
 */
export function crawlPackages(dir: string, options: CrawlOptions = {}): CrawlResult {
  const displayRoot = (options.displayRoot ?? dir).replace(/\\/g, '/').replace(/\/+$/, '') || '.';
  const diagnostics: Diagnostic[] = [];
  const packages: CrawledPackage[] = [];
  const skipped: string[] = [];
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    entries = [];
  }
  const pool = new SchemaPool();
  for (const entry of entries.sort((a, b) => byteOrder(a.name, b.name))) {
    if (entry.name.startsWith('.')) continue;
    if (entry.isSymbolicLink()) {
      diagnostics.push(
        diagnostic(
          'package_symlink',
          `${displayRoot}/${entry.name}`,
          '',
          'a package folder may not be a symlink',
          { package: entry.name },
        ),
      );
      continue;
    }
    if (!entry.isDirectory()) continue;
    if (!exists(join(dir, entry.name, 'manifest.toml'))) {
      skipped.push(entry.name);
      continue;
    }
    if (!PACKAGE_FOLDER_PATTERN.test(entry.name)) {
      diagnostics.push(
        diagnostic(
          'folder_name_invalid',
          `${displayRoot}/${entry.name}`,
          '',
          `a package folder name must match ${PACKAGE_FOLDER_PATTERN.source}`,
          { package: entry.name },
        ),
      );
      continue;
    }
    // One package's failure is its own diagnostic; the other packages are still checked.
    try {
      packages.push(crawlFolder(dir, entry.name, displayRoot, options, pool, diagnostics));
    } catch (error) {
      diagnostics.push(
        diagnostic(
          'package_check_failed',
          `${displayRoot}/${entry.name}`,
          '',
          `could not be checked: ${failureReason(error)}`,
          { package: entry.name },
        ),
      );
    }
  }
  const valid = packages.flatMap((p) => (p.package ? [p.package] : []));
  diagnostics.push(...checkPackageSet(valid));
  if (options.discover) {
    for (const crawled of packages) {
      if (!crawled.package) continue;
      diagnostics.push(
        ...matchBindings(crawled.package, {
          handlers: new Set(crawled.handlerExports ?? []),
          hooks: new Set(crawled.hookExports ?? []),
          handlersFile: `${crawled.displayRoot}/handlers.ts`,
          hooksFile: `${crawled.displayRoot}/hooks.ts`,
        }),
      );
    }
  }
  return { packages, diagnostics, skipped, bindingsChecked: options.discover !== undefined };
}
