import { parseArgs } from 'node:util';
import { catalog } from '../generated/catalog.ts';
import { loadCatalog } from '../manifest/verify-catalog.ts';
import { withUseCases } from '../app/use-case-client.ts';
import type { Definition } from '../tool/definition.ts';
import { commandGroup, UsageError, type CliIo, type CommandBody } from './command.ts';
import { toolSwitch } from './policy.ts';

function origin(d: Definition): string {
  return `${d.origin.packageId}@${d.origin.version}`;
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
  const definitions = loadCatalog(catalog).registry.definitions();
  if (values.json) {
    io.out(
      JSON.stringify(
        definitions.map((d) => ({
          name: d.tool.name,
          class: d.class,
          replay: d.replay,
          needs: d.needs,
          package: d.origin.packageId,
          version: d.origin.version,
        })),
        null,
        2,
      ),
    );
    return 0;
  }
  io.out(
    table([
      ['NAME', 'CLASS', 'REPLAY', 'NEEDS', 'PACKAGE'],
      ...definitions.map((d) => [
        d.tool.name,
        d.class,
        d.replay,
        d.needs.join(',') || '-',
        origin(d),
      ]),
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
  const loaded = loadCatalog(catalog);
  const d = loaded.registry.get(name);
  if (!d) {
    io.err(`mesh tools show: no tool named ${JSON.stringify(name)}; see mesh tools list`);
    return 1;
  }
  const pkg = loaded.packages.find((p) => p.manifest.package.id === d.origin.packageId);
  const detail = {
    name: d.tool.name,
    description: d.tool.description,
    class: d.class,
    replay: d.replay,
    needs: d.needs,
    package: { id: d.origin.packageId, version: d.origin.version, digest: d.origin.digest },
    parameters: d.tool.parameters,
    ...(d.outputSchema ? { outputSchema: d.outputSchema } : {}),
    config: (pkg?.manifest.config ?? []).map((f) => ({
      key: f.key,
      disposition: f.disposition,
      type: f.type,
    })),
  };
  if (values.json) {
    io.out(JSON.stringify(detail, null, 2));
    return 0;
  }
  io.out(
    [
      `${d.tool.name} (${origin(d)})`,
      `  ${d.tool.description}`,
      `  class: ${d.class}   replay: ${d.replay}   needs: ${d.needs.join(', ') || 'nothing'}`,
      `  digest: ${d.origin.digest}`,
      '  parameters:',
      ...JSON.stringify(d.tool.parameters, null, 2)
        .split('\n')
        .map((l) => `    ${l}`),
    ].join('\n'),
  );
  return 0;
}

async function callTool(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      agent: { type: 'string' },
      args: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  const name = positionals[0];
  if (!name || positionals.length > 1) throw new UsageError('name exactly one tool');
  const { agent, args: raw } = values;
  if (!agent) throw new UsageError('--agent is required');
  if (raw === undefined) throw new UsageError('--args is required (a JSON object; {} for none)');
  const result = await withUseCases((call) =>
    call('tools.call', { agent, tool: name, arguments: raw }),
  );
  const o = result.observation;
  if (values.json) {
    io.out(
      JSON.stringify(
        {
          run_id: result.runId,
          status: result.status,
          reason: result.reason,
          observation: o ?? null,
        },
        null,
        2,
      ),
    );
  } else {
    io.out(o ? `${o.kind === 'result' ? '' : `[${o.kind}] `}${o.text}` : '(no observation)');
    io.err(`run ${result.runId}: ${result.status}${result.reason ? ` (${result.reason})` : ''}`);
  }
  return o?.kind === 'result' ? 0 : 1;
}

/** `mesh tools …`: list, show, call and validate tools. */
export const toolsCommand: CommandBody = commandGroup({
  list,
  show,
  call: callTool,
  enable: toolSwitch(true),
  disable: toolSwitch(false),
  validate: async (rest, io) => (await import('./tools-validate.ts')).toolsValidate(rest, io),
});
