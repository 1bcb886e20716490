import { MESH_OWNED_PACKAGES } from '../tool/registry.ts';
import { diagnostic, DiagnosticSink, type Diagnostic } from './diagnostic.ts';
import { packageDigest, sha256Hex, type FileHashes } from './digest.ts';
import type { FileRead, PackageFiles } from './package-files.ts';
import type { Skill, ToolPackage } from './package-manifest.ts';
import { SchemaPool } from './schema-pool.ts';
import { parseSkill } from './skill.ts';
import { parseManifestToml } from './toml-document.ts';
import { validateManifest } from './validate-manifest.ts';
import { MESH_API_VERSION } from './versioning.ts';

/** One package's raw material, from disk or from the generated catalog. */
export interface PackageInput {
  /** The folder name under tools/. */
  readonly folder: string;
  /** How the folder is shown in diagnostics, e.g. `tools/memory`. */
  readonly displayRoot: string;
  readonly manifestText: string;
  /** Where schema files referenced by the manifest are read from. */
  readonly files: PackageFiles;
  readonly skillText?: string;
  /**
   * The sha256 of every file in the package's folder (or archive), by relative path: what the
   * digest covers. The texts read above must be among them, unchanged. Absent, the package is
   * taken to be those texts alone.
   */
  readonly fileHashes?: FileHashes;
}

/** Options shared by every package of one crawl or verification. */
export interface ReadOptions {
  /** Interns and compiles schemas; pass one pool for a whole crawl so identical schemas compile once. */
  readonly pool?: SchemaPool;
  /** Defaults to {@link MESH_API_VERSION}; tests pass others. */
  readonly meshApiVersion?: string;
  /** Defaults to the registry's {@link MESH_OWNED_PACKAGES}. */
  readonly meshOwnedPackages?: ReadonlySet<string>;
}

/** The package, or every reason it was refused. `schemaFiles` holds the schema texts read either way. */
export type PackageResult =
  | { readonly ok: true; readonly package: ToolPackage }
  | {
      readonly ok: false;
      readonly diagnostics: readonly Diagnostic[];
      readonly schemaFiles: Readonly<Record<string, string>>;
    };

function textsRead(reads: ReadonlyMap<string, FileRead>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [path, read] of reads) if (read.kind === 'ok') out[path] = read.text;
  return out;
}

/**
 * The package's file set: the hashes given with the input, checked to hold every text that was
 * read (a text that differs from its hash, or is missing from the set, is a diagnostic), or, when
 * none were given, the hashes of the texts read.
 */
function fileSet(
  input: PackageInput,
  schemaFiles: Readonly<Record<string, string>>,
  manifestFile: string,
  packageName: string | undefined,
  out: Diagnostic[],
): FileHashes {
  const read: Record<string, string> = { 'manifest.toml': sha256Hex(input.manifestText) };
  for (const [path, text] of Object.entries(schemaFiles)) read[path] = sha256Hex(text);
  if (input.skillText !== undefined) read['SKILL.md'] = sha256Hex(input.skillText);
  const given = input.fileHashes;
  if (given === undefined) return Object.freeze(read);
  for (const [path, hash] of Object.entries(read)) {
    if (given[path] === hash) continue;
    out.push(
      diagnostic(
        'digest_mismatch',
        manifestFile,
        '',
        `${path} ${Object.hasOwn(given, path) ? 'differs from the hash recorded for it' : 'is missing from the package’s file set'}`,
        packageName === undefined ? {} : { package: packageName },
      ),
    );
  }
  return Object.freeze({ ...given });
}

/**
 * Parses and validates one package without executing any of its code: manifest.toml (size cap,
 * TOML, schema v1), the schema files it references, and SKILL.md. Collects every diagnostic.
 */
export function readPackage(input: PackageInput, options: ReadOptions = {}): PackageResult {
  const manifestFile = `${input.displayRoot}/manifest.toml`;
  const sink = new DiagnosticSink(manifestFile, input.folder);
  const reads = new Map<string, FileRead>();
  const table = parseManifestToml(input.manifestText, sink);
  const manifest =
    table &&
    validateManifest(table, {
      sink,
      files: input.files,
      pool: options.pool ?? new SchemaPool(),
      reads,
      meshApiVersion: options.meshApiVersion ?? MESH_API_VERSION,
      meshOwnedPackages: options.meshOwnedPackages ?? MESH_OWNED_PACKAGES,
    });
  let skill: Skill | undefined;
  const diagnostics = [...sink.list];
  if (input.skillText !== undefined) {
    const skillSink = new DiagnosticSink(`${input.displayRoot}/SKILL.md`, sink.packageName);
    skill = parseSkill(input.skillText, skillSink);
    diagnostics.push(...skillSink.list);
  }
  const schemaFiles = textsRead(reads);
  if (!manifest || diagnostics.length > 0) return { ok: false, diagnostics, schemaFiles };
  const files = fileSet(input, schemaFiles, manifestFile, sink.packageName, diagnostics);
  if (diagnostics.length > 0) return { ok: false, diagnostics, schemaFiles };
  const pkg: ToolPackage = {
    folder: input.folder,
    manifestFile,
    manifest,
    digest: packageDigest(files),
    files,
    manifestSha256: sha256Hex(input.manifestText),
    manifestText: input.manifestText,
    schemaFiles: Object.freeze(schemaFiles),
    ...(skill ? { skill } : {}),
    ...(input.skillText !== undefined ? { skillText: input.skillText } : {}),
  };
  return { ok: true, package: Object.freeze(pkg) };
}
