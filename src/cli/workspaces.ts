import { readFileSync } from 'node:fs';
import { workspaceBackendKeyOperation } from '../app/backends/operations.ts';
import { operationSubcommand } from './operation-command.ts';
import { parseArgs } from 'node:util';
import { withUseCases } from '../app/use-case-client.ts';
import { commandGroup, UsageError, type CliIo, type CommandBody } from './command.ts';

async function add(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      kind: { type: 'string' },
      name: { type: 'string' },
      dev: { type: 'boolean', default: false },
      'api-url': { type: 'string' },
      'sandbox-url': { type: 'string' },
      'api-key-file': { type: 'string' },
      template: { type: 'string' },
    },
  });
  if (!values.kind) throw new UsageError('--kind is required (local or e2b)');
  if (!values.name) throw new UsageError('--name is required');
  let apiKey: string | undefined;
  if (values['api-key-file'] !== undefined) {
    try {
      apiKey = readFileSync(values['api-key-file'], 'utf8').trim();
    } catch (error) {
      throw new UsageError(
        `cannot read the API key file ${values['api-key-file']} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  }
  const added = await withUseCases((call) =>
    call('workspaces.add', {
      name: values.name ?? '',
      kind: values.kind ?? '',
      development: values.dev,
      ...(values['api-url'] === undefined ? {} : { apiUrl: values['api-url'] }),
      ...(values.template === undefined ? {} : { template: values.template }),
      ...(values['sandbox-url'] === undefined ? {} : { sandboxUrl: values['sandbox-url'] }),
      ...(apiKey === undefined ? {} : { apiKey }),
    }),
  );
  io.out(
    `Added workspace backend ${added.name} (${added.kind}${added.development ? ', development only' : ''}).`,
  );
  return 0;
}

async function grant(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      agent: { type: 'string' },
      backend: { type: 'string' },
      'allow-host': { type: 'string', multiple: true, default: [] },
    },
  });
  if (!values.agent || !values.backend) throw new UsageError('--agent and --backend are required');
  const granted = await withUseCases((call) =>
    call('workspaces.grant', {
      agent: values.agent ?? '',
      backend: values.backend ?? '',
      allowHosts: values['allow-host'] ?? [],
    }),
  );
  io.out(
    `Granted ${granted.agent} workspaces on ${granted.backend}; egress allowed to ${granted.egress.length === 0 ? 'no host' : granted.egress.join(', ')}.`,
  );
  return 0;
}

async function revoke(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({ args: [...args], options: { agent: { type: 'string' } } });
  if (!values.agent) throw new UsageError('--agent is required');
  const removed = await withUseCases((call) =>
    call('workspaces.revoke', { agent: values.agent ?? '' }),
  );
  io.out(removed ? `Revoked ${values.agent}'s workspace backend.` : `${values.agent} had none.`);
  return 0;
}

async function remove(args: readonly string[], io: CliIo): Promise<number> {
  const { positionals } = parseArgs({ args: [...args], allowPositionals: true, options: {} });
  if (positionals.length !== 1) throw new UsageError('name exactly one backend');
  await withUseCases((call) => call('workspaces.remove', { backend: positionals[0] ?? '' }));
  io.out(`Removed workspace backend ${positionals[0]} and its grants.`);
  return 0;
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { json: { type: 'boolean', default: false } },
  });
  const state = await withUseCases((call) => call('workspaces.list', {}));
  if (values.json) {
    io.out(JSON.stringify(state, null, 2));
    return 0;
  }
  io.out('Backends:');
  if (state.backends.length === 0)
    io.out('  none: mesh workspaces add --kind local --name N --dev');
  for (const b of state.backends)
    io.out(
      `  ${b.name}  ${b.kind}${b.development ? '  DEVELOPMENT ONLY' : ''}${b.apiKey === null ? '' : `  key ${b.apiKey ? 'present' : 'absent'}`}`,
    );
  io.out('Grants:');
  if (state.grants.length === 0) io.out('  none: mesh workspaces grant --agent A --backend N');
  for (const g of state.grants)
    io.out(`  ${g.agent} → ${g.backend}  egress: ${g.egress.join(', ') || 'none'}`);
  io.out('Live workspaces:');
  if (state.workspaces.length === 0) io.out('  none');
  for (const w of state.workspaces)
    io.out(
      `  ${w.id}  run ${w.run} (${w.runStatus})  ${w.agent} on ${w.backend}  age ${w.ageSeconds} s  compute ${w.computeSeconds} s`,
    );
  return 0;
}

/** `mesh workspaces …`: where agents' code runs, who may use it, and what is running now. */
export const workspacesCommand: CommandBody = commandGroup({
  add,
  grant,
  revoke,
  remove,
  list,
  key: operationSubcommand(workspaceBackendKeyOperation),
});
