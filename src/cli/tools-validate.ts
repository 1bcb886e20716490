import { statSync } from 'node:fs';
import { crawlPackages } from '../manifest/crawl.ts';
import { formatDiagnostic, sortDiagnostics } from '../manifest/diagnostic.ts';
import { loadExportDiscovery } from '../manifest/export-discovery.ts';
import { UsageError, type CliIo, type Subcommand } from './command.ts';

/*
 * Checks the tool packages under DIR (default: tools/) as the build and start-up will: every
 * manifest.toml against schema v1, the schema files and SKILL.md it references, secret need
 * mapping, package ids and tool names across packages, and the 1:1 match between each manifest and
 * the named exports of its handlers.ts and hooks.ts. Reads files only; runs no package code.
 *
 * Prints one problem per line (file: field: message) and exits 1 when there is any.
 */

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

async function validate(dir: string, io: CliIo): Promise<number> {
  if (!isDirectory(dir)) {
    io.err(`mesh tools validate: ${dir} is not a directory`);
    return 1;
  }
  const discover = await loadExportDiscovery();
  const crawl = crawlPackages(dir, discover ? { discover } : {});
  for (const folder of crawl.skipped)
    io.err(`note: ${dir}/${folder} has no manifest.toml; skipped`);
  if (!crawl.bindingsChecked) {
    io.err('note: the typescript package is not installed; handler bindings were not checked');
  }
  if (crawl.diagnostics.length > 0) {
    for (const d of sortDiagnostics(crawl.diagnostics)) io.out(formatDiagnostic(d));
    io.err(`mesh tools validate: ${plural(crawl.diagnostics.length, 'problem')} in ${dir}`);
    return 1;
  }
  const packages = crawl.packages.flatMap((p) => (p.package ? [p.package] : []));
  const tools = packages.reduce((n, p) => n + p.manifest.tools.length, 0);
  const hooks = packages.reduce((n, p) => n + Object.keys(p.manifest.hooks).length, 0);
  const skills = packages.filter((p) => p.skill).length;
  io.out(
    `ok: ${plural(packages.length, 'package')}, ${plural(tools, 'tool')}, ${plural(hooks, 'hook')}, ` +
      `${plural(skills, 'skill')} in ${dir}` +
      (crawl.bindingsChecked ? '; handler and hook bindings match' : ''),
  );
  return 0;
}

/** `mesh tools validate [DIR]`: crawls tool packages on disk and reports every problem. */
export const toolsValidate: Subcommand = async (args, io) => {
  if (args.length > 1 || args.some((a) => a.startsWith('-'))) {
    throw new UsageError('expected at most one directory');
  }
  return validate((args[0] ?? 'tools').replace(/\/+$/, '') || '/', io);
};
