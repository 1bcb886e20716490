import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCatalogModule } from './catalog-writer.ts';
import { crawlPackages } from './crawl.ts';
import type { Diagnostic } from './diagnostic.ts';
import { loadExportDiscovery } from './export-discovery.ts';

/** Where to crawl and where to write. */
export interface BuildCatalogOptions {
  readonly toolsDir: string;
  readonly outFile: string;
  /** How the tools directory is named in diagnostics (default `tools`). */
  readonly displayRoot?: string;
  /** How the generated file is named in messages (default: `outFile`). */
  readonly displayOut?: string;
  /** Compare only: never write. */
  readonly check: boolean;
}

/** What a build did. */
export type BuildCatalogOutcome =
  /** A package is invalid or does not match its exports: nothing was written. */
  | { readonly kind: 'invalid'; readonly diagnostics: readonly Diagnostic[] }
  /** The TypeScript parser is not installed, so exports cannot be discovered. */
  | { readonly kind: 'unavailable' }
  | {
      readonly kind: 'written';
      readonly file: string;
      readonly packages: number;
      readonly skipped: readonly string[];
    }
  | {
      readonly kind: 'unchanged';
      readonly file: string;
      readonly packages: number;
      readonly skipped: readonly string[];
    }
  /** Check mode: the file differs from what would be written (or is missing). */
  | { readonly kind: 'stale'; readonly file: string };

function importPath(fromDir: string, target: string): string {
  const rel = relative(fromDir, target).split(sep).join('/');
  return rel.startsWith('.') ? rel : `./${rel}`;
}

/**
 * Crawls the tools/ directory and renders the catalog. An invalid package, or one whose handlers.ts
 * or hooks.ts exports do not match its manifest 1:1, fails the build (first party fails loud).
 * Handler lists come from the exports, never from the manifest. The file is written atomically,
 * and only when its content changes.
 */
export async function buildCatalog(options: BuildCatalogOptions): Promise<BuildCatalogOutcome> {
  const discover = await loadExportDiscovery();
  if (!discover) return { kind: 'unavailable' };
  const crawl = crawlPackages(options.toolsDir, {
    displayRoot: options.displayRoot ?? 'tools',
    discover,
  });
  if (crawl.diagnostics.length > 0) return { kind: 'invalid', diagnostics: crawl.diagnostics };
  const outDir = dirname(options.outFile);
  const text = renderCatalogModule(
    crawl.packages.map((p) => {
      if (!p.package) throw new Error(`unreachable: ${p.folder} has no diagnostics but no package`);
      return { package: p.package, handlerExports: p.handlerExports, hookExports: p.hookExports };
    }),
    {
      catalogTypes: importPath(outDir, fileURLToPath(new URL('./catalog.ts', import.meta.url))),
      toolsDir: importPath(outDir, options.toolsDir),
    },
  );
  const file = options.displayOut ?? options.outFile;
  const current = existsSync(options.outFile) ? readFileSync(options.outFile, 'utf8') : undefined;
  const summary = { file, packages: crawl.packages.length, skipped: crawl.skipped };
  if (current === text) return { kind: 'unchanged', ...summary };
  if (options.check) return { kind: 'stale', file };
  mkdirSync(outDir, { recursive: true });
  const temporary = `${options.outFile}.${process.pid}.tmp`;
  writeFileSync(temporary, text, 'utf8');
  renameSync(temporary, options.outFile);
  return { kind: 'written', ...summary };
}
