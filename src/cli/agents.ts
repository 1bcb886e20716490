import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { listAgentsOperation, updateAgentOperation } from '../app/agent-operations.ts';
import { withUseCases } from '../app/use-case-client.ts';
import { operationSubcommand } from './operation-command.ts';
import { commandGroup, UsageError, type CliIo, type CommandBody } from './command.ts';

async function create(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: {
      provider: { type: 'string' },
      model: { type: 'string' },
      persona: { type: 'string' },
      'image-input': { type: 'boolean', default: false },
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
  const agent = await withUseCases((call) =>
    call('agents.create', {
      name,
      ...(values.provider === undefined ? {} : { provider: values.provider }),
      ...(values.model === undefined ? {} : { model: values.model }),
      persona,
      ...(values['image-input'] ? { imageInput: true } : {}),
    }),
  );
  io.out(
    `Created agent ${agent.name} (${agent.id})${values.model ? ` using ${values.provider} / ${values.model}` : ''}.`,
  );
  return 0;
}

/** `mesh agents image-input NAME on|off`: whether the agent's model accepts image input. */
async function imageInput(args: readonly string[], io: CliIo): Promise<number> {
  const { positionals } = parseArgs({ args: [...args], allowPositionals: true, options: {} });
  const [name, setting] = positionals;
  if (!name || (setting !== 'on' && setting !== 'off') || positionals.length > 2)
    throw new UsageError('usage: mesh agents image-input NAME on|off');
  const agent = await withUseCases((call) =>
    call('agents.imageInput', { agent: name, accepts: setting === 'on' }),
  );
  io.out(
    `${agent.name}'s model ${agent.modelImageInput ? 'accepts' : 'does not accept'} image input: images tools return ${agent.modelImageInput ? 'are' : 'are not'} shown to it.`,
  );
  return 0;
}

async function remove(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { yes: { type: 'boolean', default: false } },
  });
  const name = positionals[0];
  if (!name || positionals.length > 1) throw new UsageError('name exactly one agent');
  if (!values.yes)
    throw new UsageError(
      `deleting ${name} removes its conversations, runs, memories and connections and revokes its secrets; pass --yes to do it`,
    );
  await withUseCases((call) => call('agents.delete', { agent: name }));
  io.out(`Deleted agent ${name}.`);
  return 0;
}

/** `mesh agents …`: create, list and delete agents. */
export const agentsCommand: CommandBody = commandGroup({
  create,
  list: operationSubcommand(listAgentsOperation),
  delete: remove,
  'image-input': imageInput,
  update: operationSubcommand(updateAgentOperation),
});
