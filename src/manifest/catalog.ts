import type { ToolHandler } from '../tool/definition.ts';
import type { PackageHook } from '../tool/hook.ts';

/** One first-party package as the generator embedded it: texts only, nothing read at start-up. */
export interface CatalogPackage {
  /** The folder under tools/. */
  readonly folder: string;
  /** manifest.toml, verbatim. */
  readonly manifest: string;
  /** sha256 (hex) of manifest.toml. */
  readonly manifestSha256: string;
  /** The package content digest over its whole file set; see `packageDigest`. */
  readonly digest: string;
  /**
   * sha256 (hex) of every file in the package's folder, by relative path: handlers.ts and the
   * rest are compiled in, not embedded, so they are carried by hash; the embedded texts must
   * match theirs.
   */
  readonly files: Readonly<Record<string, string>>;
  /** Every schema file the manifest references, by relative path, verbatim. */
  readonly schemas: Readonly<Record<string, string>>;
  /** SKILL.md, verbatim, when the package ships one. */
  readonly skill?: string;
}

/** A named export of `tools/<folder>/handlers.ts`, keyed by the package id. */
export interface HandlerBinding {
  readonly packageId: string;
  readonly name: string;
  readonly fn: ToolHandler;
}

/** A named export of `tools/<folder>/hooks.ts`, keyed by the package id. */
export interface HookBinding {
  readonly packageId: string;
  readonly name: string;
  readonly fn: PackageHook;
}

/**
 * The build-time generated catalog (`src/generated/catalog.ts`): what the binary ships with. The
 * handler and hook lists come from the packages' exports, not from their manifests, so start-up
 * verification can compare the two.
 */
export interface Catalog {
  readonly packages: readonly CatalogPackage[];
  readonly handlers: readonly HandlerBinding[];
  readonly hooks: readonly HookBinding[];
}
