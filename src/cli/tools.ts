import { parseArgs } from 'node:util';
import { installedTool, installedTools, type ToolListing } from '../app/packages/tool-catalog.ts';
import { agentToolsOperation } from '../app/packages/tool-operations.ts';
import { UsageError, type CliIo, type Subcommand } from './command.ts';
import { operationSubcommand } from './operation-command.ts';

function origin(t: { readonly package: string; readonly version: string }): string {
  return `${t.package}@${t.version}`;
}

function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length))) ?? [];
  return rows
    .map((r) =>
      r
        .map((c, i) => c.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

function list(args: readonly string[], io: CliIo): number {
  const { values } = parseArgs({
    args: [...args],
    options: { json: { type: 'boolean', default: false } },
  });
  const tools: ToolListing[] = installedTools();
  if (values.json) {
    io.out(JSON.stringify(tools, null, 2));
    return 0;
  }
  io.out(
    table([
      ['NAME', 'CLASS', 'REPLAY', 'NEEDS', 'PACKAGE'],
      ...tools.map((t) => [t.name, t.class, t.replay, t.needs.join(',') || '-', origin(t)]),
    ]),
  );
  return 0;
}

function show(args: readonly string[], io: CliIo): number {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { json: { type: 'boolean', default: false } },
  });
  const name = positionals[0];
  if (!name || positionals.length > 1) throw new UsageError('name exactly one tool');
  const detail = installedTool(name);
  if (!detail) {
    io.err(`mesh tools show: no tool named ${JSON.stringify(name)}; see mesh tools list`);
    return 1;
  }
  if (values.json) {
    io.out(JSON.stringify(detail, null, 2));
    return 0;
  }
  io.out(
    [
      `${detail.name} (${detail.package.id}@${detail.package.version})`,
      `  ${detail.description}`,
      `  class: ${detail.class}   replay: ${detail.replay}   needs: ${detail.needs.join(', ') || 'nothing'}`,
      `  digest: ${detail.package.digest}`,
      '  parameters:',
      ...JSON.stringify(detail.parameters, null, 2)
        .split('\n')
        .map((l) => `    ${l}`),
    ].join('\n'),
  );
  return 0;
}

/**
 * What `mesh tools` has beside its operations (call, search, set and its enable/disable): the
 * installed tools as their manifests declare them, one tool in full, and checking packages on disk.
 */
export const toolSubcommands: Readonly<Record<string, Subcommand>> = {
  // With --agent: the agent's tools as its turn sees them (agents.tools); without: every
  // installed tool.
  list: (args, io) =>
    args.some((a) => a === '--agent' || a.startsWith('--agent='))
      ? operationSubcommand(agentToolsOperation)(args, io)
      : list(args, io),
  show,
  validate: async (rest, io) => (await import('./tools-validate.ts')).toolsValidate(rest, io),
};
