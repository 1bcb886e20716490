import { parseArgs } from 'node:util';
import { configOperations } from '../app/packages/config-operations.ts';
import { secretOperations } from '../app/packages/secret-operations.ts';
import { withUseCases } from '../app/use-case-client.ts';
import { operationGroup } from './operation-command.ts';
import { UsageError, type CommandBody, type Subcommand } from './command.ts';

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

/** `mesh config …`: an agent's tool config values. */
export const configCommand: CommandBody = operationGroup(configOperations);

/** `mesh secrets …`: an agent's credentials for tools, write-only. */
export const secretsCommand: CommandBody = operationGroup(secretOperations);
