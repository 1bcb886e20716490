import { crawlPackages } from '../../manifest/crawl.ts';
import { formatDiagnostic, sortDiagnostics } from '../../manifest/diagnostic.ts';
import { loadExportDiscovery } from '../../manifest/export-discovery.ts';

/** What checking a folder of tool packages found (`mesh tools validate`). */
export interface PackageCheck {
  /** Subfolders without a manifest.toml, skipped. */
  readonly skipped: readonly string[];
  /** Whether handler and hook exports were matched (needs the typescript package). */
  readonly bindingsChecked: boolean;
  /** One line per problem, `file: field: message`, sorted; empty when the packages are valid. */
  readonly problems: readonly string[];
  readonly packages: number;
  readonly tools: number;
  readonly hooks: number;
  readonly skills: number;
}

/**
 * Checks the tool packages under `dir` as the build and start-up will: every manifest.toml
 * against schema v1, the schema files and SKILL.md it references, secret need mapping, package
 * ids and tool names across packages, and the 1:1 match between each manifest and the named
 * exports of its handlers.ts and hooks.ts. Reads files only; runs no package code.
 */
export async function checkPackages(dir: string): Promise<PackageCheck> {
  const discover = await loadExportDiscovery();
  const crawl = crawlPackages(dir, discover ? { discover } : {});
  const packages = crawl.packages.flatMap((p) => (p.package ? [p.package] : []));
  return {
    skipped: crawl.skipped,
    bindingsChecked: crawl.bindingsChecked,
    problems: sortDiagnostics(crawl.diagnostics).map(formatDiagnostic),
    packages: packages.length,
    tools: packages.reduce((n, p) => n + p.manifest.tools.length, 0),
    hooks: packages.reduce((n, p) => n + Object.keys(p.manifest.hooks).length, 0),
    skills: packages.filter((p) => p.skill).length,
  };
}
