import { readFileSync } from 'node:fs';
import { listProvidersOperation, providerKeyOperation } from '../app/backends/operations.ts';
import { operationSubcommand } from './operation-command.ts';
import { parseArgs } from 'node:util';
import { withUseCases } from '../app/use-case-client.ts';
import { commandGroup, UsageError, type CliIo, type CommandBody } from './command.ts';

function readFileOrRefuse(path: string, what: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read the ${what} file ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

async function add(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: {
      name: { type: 'string' },
      'base-url': { type: 'string' },
      'api-key-file': { type: 'string' },
      scripted: { type: 'string' },
      'context-tokens': { type: 'string' },
    },
  });
  if (!values.name) throw new UsageError('--name is required');
  const scripted = values.scripted !== undefined;
  if (scripted === (values['base-url'] !== undefined))
    throw new UsageError('give either --base-url or --scripted');
  const contextTokens =
    values['context-tokens'] === undefined ? undefined : Number(values['context-tokens']);
  let script: unknown = null;
  let apiKey: string | undefined;
  if (scripted) {
    try {
      script = JSON.parse(readFileOrRefuse(values.scripted ?? '', 'script'));
    } catch (error) {
      if (error instanceof SyntaxError) throw new UsageError('the script file is not valid JSON');
      throw error;
    }
  } else {
    if (!values['api-key-file']) throw new UsageError('--api-key-file is required with --base-url');
    apiKey = readFileOrRefuse(values['api-key-file'], 'API key').trim();
    if (apiKey === '') throw new UsageError('the API key file is empty');
  }
  const baseUrl = values['base-url'];
  const provider = await withUseCases((call) =>
    call(
      'providers.add',
      scripted
        ? {
            name: values.name ?? '',
            kind: 'scripted',
            script,
            ...(contextTokens === undefined ? {} : { contextTokens }),
          }
        : {
            name: values.name ?? '',
            kind: 'openai_compatible',
            baseUrl: baseUrl ?? '',
            apiKey: apiKey ?? '',
            ...(contextTokens === undefined ? {} : { contextTokens }),
          },
    ),
  );
  io.out(
    apiKey === undefined
      ? `Added provider ${provider.name} (${provider.kind}).`
      : `Added provider ${provider.name} (${provider.kind}); its API key is stored encrypted.`,
  );
  return 0;
}

/** `mesh providers …`: configure model providers (in the database, never the environment). */
async function remove(args: readonly string[], io: CliIo): Promise<number> {
  const { positionals } = parseArgs({ args: [...args], allowPositionals: true, options: {} });
  const name = positionals[0];
  if (!name || positionals.length > 1) throw new UsageError('name exactly one provider');
  await withUseCases((call) => call('providers.delete', { provider: name }));
  io.out(`Deleted provider ${name} and revoked its API key.`);
  return 0;
}

export const providersCommand: CommandBody = commandGroup({
  add,
  list: operationSubcommand(listProvidersOperation),
  delete: remove,
  key: operationSubcommand(providerKeyOperation),
});
