import { readFileSync } from 'node:fs';
import { webProviderKeyOperation } from '../app/backends/operations.ts';
import { operationSubcommand } from './operation-command.ts';
import { parseArgs } from 'node:util';
import { withUseCases } from '../app/use-case-client.ts';
import { commandGroup, UsageError, type CliIo, type CommandBody } from './command.ts';

function ceiling(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d{1,6}$/.test(raw)) throw new UsageError('--max-calls-per-run takes a whole number');
  return Number(raw);
}

async function add(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      kind: { type: 'string' },
      name: { type: 'string' },
      'base-url': { type: 'string' },
      'allow-loopback-http': { type: 'boolean', default: false },
      'max-calls-per-run': { type: 'string' },
      'account-id': { type: 'string' },
      'api-key-file': { type: 'string' },
    },
  });
  if (!values.kind) throw new UsageError('--kind is required (exa, brave, tavily or cloudflare)');
  if (!values.name) throw new UsageError('--name is required');
  const file = values['api-key-file'];
  if (file === undefined) throw new UsageError('--api-key-file is required');
  let apiKey: string;
  try {
    apiKey = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new UsageError(
      `cannot read the API key file ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  const maxCallsPerRun = ceiling(values['max-calls-per-run']);
  const added = await withUseCases((call) =>
    call('web.add', {
      name: values.name ?? '',
      kind: values.kind ?? '',
      apiKey,
      allowLoopbackHttp: values['allow-loopback-http'],
      ...(values['base-url'] === undefined ? {} : { baseUrl: values['base-url'] }),
      ...(maxCallsPerRun === undefined ? {} : { maxCallsPerRun }),
      ...(values['account-id'] === undefined ? {} : { accountId: values['account-id'] }),
    }),
  );
  io.out(
    `Added web provider ${added.name} (${added.kind} at ${added.baseUrl}; serves ${added.serves.join(' and ')}; at most ${added.maxCallsPerRun} calls per run).`,
  );
  return 0;
}

async function set(args: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { 'max-calls-per-run': { type: 'string' } },
  });
  if (positionals.length !== 1) throw new UsageError('name exactly one web provider');
  const maxCallsPerRun = ceiling(values['max-calls-per-run']);
  if (maxCallsPerRun === undefined) throw new UsageError('--max-calls-per-run is required');
  const updated = await withUseCases((call) =>
    call('web.set', { provider: positionals[0] ?? '', maxCallsPerRun }),
  );
  io.out(`Web provider ${updated.name}: at most ${updated.maxCallsPerRun} calls per run.`);
  return 0;
}

function agentAndProvider(args: readonly string[]): { agent: string; provider: string } {
  const { values } = parseArgs({
    args: [...args],
    options: { agent: { type: 'string' }, provider: { type: 'string' } },
  });
  if (!values.agent || !values.provider)
    throw new UsageError('--agent and --provider are required');
  return { agent: values.agent, provider: values.provider };
}

async function grant(args: readonly string[], io: CliIo): Promise<number> {
  const input = agentAndProvider(args);
  const granted = await withUseCases((call) => call('web.grant', input));
  io.out(
    `Granted ${granted.agent} web provider ${granted.provider} (${granted.serves.join(' and ')}).`,
  );
  return 0;
}

async function revoke(args: readonly string[], io: CliIo): Promise<number> {
  const input = agentAndProvider(args);
  const removed = await withUseCases((call) => call('web.revoke', input));
  io.out(
    removed
      ? `Revoked ${input.agent}'s web provider ${input.provider}.`
      : `${input.agent} was not granted ${input.provider}.`,
  );
  return 0;
}

async function remove(args: readonly string[], io: CliIo): Promise<number> {
  const { positionals } = parseArgs({ args: [...args], allowPositionals: true, options: {} });
  if (positionals.length !== 1) throw new UsageError('name exactly one web provider');
  await withUseCases((call) => call('web.remove', { provider: positionals[0] ?? '' }));
  io.out(`Removed web provider ${positionals[0]}, its key and its grants.`);
  return 0;
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { json: { type: 'boolean', default: false } },
  });
  const state = await withUseCases((call) => call('web.list', {}));
  if (values.json) {
    io.out(JSON.stringify(state, null, 2));
    return 0;
  }
  io.out('Providers:');
  if (state.providers.length === 0)
    io.out('  none: mesh web add --kind exa --name exa --api-key-file F');
  for (const p of state.providers)
    io.out(
      `  ${p.name}  ${p.kind}  ${p.baseUrl}  serves ${p.serves.join(', ')}  ${p.maxCallsPerRun} calls/run  key ${p.apiKey ? 'present' : 'absent'}${p.allowLoopbackHttp ? '  LOOPBACK HTTP (development)' : ''}`,
    );
  io.out('Grants:');
  if (state.grants.length === 0) io.out('  none: mesh web grant --agent A --provider N');
  for (const g of state.grants) io.out(`  ${g.agent} → ${g.provider}  (by ${g.grantedBy})`);
  return 0;
}

/** `mesh web …`: the hosted search and reading APIs behind web_search and web_read. */
export const webCommand: CommandBody = commandGroup({
  add,
  set,
  grant,
  revoke,
  remove,
  list,
  key: operationSubcommand(webProviderKeyOperation),
});
