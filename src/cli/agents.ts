import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { withMesh } from '../app/mesh.ts';
import { createAgent } from '../app/operator.ts';
import { listAgents } from '../store/agents.ts';
import { commandGroup, printList, UsageError, type CliIo, type Command } from './command.ts';

const USAGE = `Usage:
  mesh agents create NAME [--provider P --model M] [--persona FILE]
                               create an agent (lowercase letters, digits, - and _)
  mesh agents list [--json]    list agents`;

async function create(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      provider: { type: 'string' },
      model: { type: 'string' },
      persona: { type: 'string' },
    },
  });
  const name = positionals[0];
  if (!name || positionals.length > 1) throw new UsageError('name exactly one agent');
  if ((values.provider === undefined) !== (values.model === undefined)) {
    throw new UsageError('--provider and --model go together');
  }
  let persona: string | null = null;
  if (values.persona !== undefined) {
    try {
      persona = readFileSync(values.persona, 'utf8');
    } catch {
      throw new UsageError(`cannot read the persona file ${values.persona}`);
    }
  }
  return withMesh(async (mesh) => {
    const agent = await createAgent(mesh, {
      name,
      ...(values.provider === undefined ? {} : { provider: values.provider }),
      ...(values.model === undefined ? {} : { model: values.model }),
      persona,
    });
    io.out(
      `Created agent ${agent.name} (${agent.id})${values.model ? ` using ${values.provider} / ${values.model}` : ''}.`,
    );
    return 0;
  });
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { json: { type: 'boolean', default: false } },
  });
  return withMesh(async (mesh) => {
    printList(io, {
      json: values.json,
      rows: await listAgents(mesh.db),
      toJson: (a) => ({ id: a.id, name: a.name, created_at: a.createdAt }),
      empty: 'No agents yet: mesh agents create NAME',
      line: (a) => `${a.name}  ${a.id}  ${a.createdAt.toISOString()}`,
    });
    return 0;
  });
}

/** `mesh agents …`: create and list agents. */
export const agentsCommand: Command = commandGroup({
  name: 'agents',
  summary: 'Create and list agents',
  usage: USAGE,
  subcommands: { create, list },
});
