import { parseArgs } from 'node:util';
import { secretOperations } from '../app/packages/secret-operations.ts';
import { withUseCases } from '../app/use-case-client.ts';
import { operationGroup } from './operation-command.ts';
import { commandGroup, UsageError, type CommandBody, type Subcommand } from './command.ts';

function needAgent(name: string | undefined): string {
  if (!name) throw new UsageError('--agent is required');
  return name;
}

/** `mesh tools enable|disable NAME --agent A`: per-agent opt-outs of built-in tools. */
export function toolSwitch(enabled: boolean): Subcommand {
  return async (args, io) => {
    const { values, positionals } = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { agent: { type: 'string' } },
    });
    const name = positionals[0];
    if (!name || positionals.length > 1) throw new UsageError('name exactly one tool');
    const agent = needAgent(values.agent);
    const done = await withUseCases((call) =>
      call('tools.setEnabled', { agent, tool: name, enabled }),
    );
    io.out(`${name} is ${enabled ? 'enabled' : 'disabled'} for ${done.agent.name}.`);
    return 0;
  };
}

const configSet: Subcommand = async (args, io) => {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { agent: { type: 'string' }, package: { type: 'string' } },
  });
  const [key, raw] = positionals;
  if (!values.package) throw new UsageError('--package is required');
  if (key === undefined || raw === undefined || positionals.length > 2)
    throw new UsageError('give KEY and VALUE');
  const agent = needAgent(values.agent);
  const packageId = values.package;
  const done = await withUseCases((call) =>
    call('config.set', { agent, packageId, key, text: raw }),
  );
  io.out(`Set ${packageId} ${key} for ${done.agent.name}.`);
  return 0;
};

const configList: Subcommand = async (args, io) => {
  const { values } = parseArgs({
    args: [...args],
    options: { agent: { type: 'string' }, json: { type: 'boolean', default: false } },
  });
  const agent = needAgent(values.agent);
  const all = (await withUseCases((call) => call('config.list', { agent }))).values;
  if (values.json) io.out(JSON.stringify(all, null, 2));
  else
    for (const [id, v] of Object.entries(all))
      for (const [k, x] of Object.entries(v)) io.out(`${id} ${k} = ${JSON.stringify(x)}`);
  return 0;
};

/** `mesh config …`: an agent's tool config values. */
export const configCommand: CommandBody = commandGroup({ set: configSet, list: configList });

/** `mesh secrets …`: an agent's credentials for tools, write-only. */
export const secretsCommand: CommandBody = operationGroup(secretOperations);
