import type { DiagnosticSink } from './diagnostic.ts';
import type { FileRead, PackageFiles } from './package-files.ts';
import type { SchemaPool } from './schema-pool.ts';

/** What validating one manifest needs besides the manifest itself. */
export interface ValidationContext {
  readonly sink: DiagnosticSink;
  readonly files: PackageFiles;
  readonly pool: SchemaPool;
  /** Files read so far, by relative path: one read per file even when several tools share it. */
  readonly reads: Map<string, FileRead>;
  /** The running Mesh API version that `package.mesh_api` must admit. */
  readonly meshApiVersion: string;
  /** Packages allowed to declare `internal` replay. */
  readonly meshOwnedPackages: ReadonlySet<string>;
}
