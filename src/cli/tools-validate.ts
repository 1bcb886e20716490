import { statSync } from 'node:fs';
import { checkPackages } from '../app/packages/package-check.ts';
import { UsageError, type CliIo, type Subcommand } from './command.ts';

/*
 * `mesh tools validate`: checks the tool packages under DIR (default: tools/) as the build and
 * start-up will (src/app/packages/package-check.ts). Prints one problem per line (file: field: message)
 * and exits 1 when there is any.
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
  const check = await checkPackages(dir);
  for (const folder of check.skipped)
    io.err(`note: ${dir}/${folder} has no manifest.toml; skipped`);
  if (!check.bindingsChecked) {
    io.err('note: the typescript package is not installed; handler bindings were not checked');
  }
  if (check.problems.length > 0) {
    for (const line of check.problems) io.out(line);
    io.err(`mesh tools validate: ${plural(check.problems.length, 'problem')} in ${dir}`);
    return 1;
  }
  io.out(
    `ok: ${plural(check.packages, 'package')}, ${plural(check.tools, 'tool')}, ${plural(check.hooks, 'hook')}, ` +
      `${plural(check.skills, 'skill')} in ${dir}` +
      (check.bindingsChecked ? '; handler and hook bindings match' : ''),
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
