import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { withMesh } from '../app/mesh.ts';
import { parseScript } from '../providers/scripted.ts';
import { insertModelProvider, listModelProviders } from '../store/model-providers.ts';
import { commandGroup, UsageError, type CliIo, type Command } from './command.ts';

const USAGE = `Usage:
  mesh providers add --name N --base-url URL --api-key-file F [--context-tokens T]
      an OpenAI-compatible Chat Completions endpoint (OpenRouter, vLLM, Ollama, OpenAI);
      the key is read from the file and stored encrypted as the provider's secret
  mesh providers add --name N --scripted FILE
      a scripted provider: replies from a JSON file (tests and demos)
  mesh providers list [--json]`;

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
  if (!/^[a-z0-9][a-z0-9_-]{0,62}$/.test(values.name)) {
    throw new UsageError('a provider name is 1-63 lowercase letters, digits, "-" or "_"');
  }
  const scripted = values.scripted !== undefined;
  if (scripted === (values['base-url'] !== undefined))
    throw new UsageError('give either --base-url or --scripted');
  const contextTokens =
    values['context-tokens'] === undefined ? undefined : Number(values['context-tokens']);
  if (
    contextTokens !== undefined &&
    (!Number.isSafeInteger(contextTokens) || contextTokens < 1000)
  ) {
    throw new UsageError('--context-tokens must be an integer of at least 1000');
  }
  let script = null;
  let baseUrl: string | null = null;
  let apiKey: string | undefined;
  if (scripted) {
    const text = readFileOrRefuse(values.scripted ?? '', 'script');
    try {
      script = parseScript(JSON.parse(text));
    } catch (error) {
      throw new UsageError(
        error instanceof SyntaxError
          ? 'the script file is not valid JSON'
          : (error as Error).message,
      );
    }
  } else {
    baseUrl = values['base-url'] ?? null;
    try {
      const url = new URL(baseUrl ?? '');
      if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
    } catch {
      throw new UsageError('--base-url must be an http(s) URL');
    }
    if (!values['api-key-file']) throw new UsageError('--api-key-file is required with --base-url');
    apiKey = readFileOrRefuse(values['api-key-file'], 'API key').trim();
    if (apiKey === '') throw new UsageError('the API key file is empty');
  }
  return withMesh(async (mesh) => {
    const provider = await mesh.db.transaction(async (tx) =>
      insertModelProvider(tx, {
        id: randomUUID(),
        name: values.name ?? '',
        kind: scripted ? 'scripted' : 'openai_compatible',
        baseUrl,
        script: script as never,
        ...(contextTokens ? { contextTokens } : {}),
      }),
    );
    if (apiKey !== undefined) {
      const meta = await mesh.secrets.capture({
        ownerType: 'model_provider',
        ownerId: provider.id,
        kind: 'api_key',
        value: apiKey,
      });
      io.out(
        `Added provider ${provider.name} (${provider.kind}); its API key is stored encrypted (version ${meta.version}).`,
      );
    } else {
      io.out(`Added provider ${provider.name} (${provider.kind}).`);
    }
    return 0;
  });
}

async function list(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...args],
    options: { json: { type: 'boolean', default: false } },
  });
  return withMesh(async (mesh) => {
    const providers = await listModelProviders(mesh.db);
    const rows = await Promise.all(
      providers.map(async (p) => ({
        name: p.name,
        kind: p.kind,
        base_url: p.baseUrl,
        context_tokens: p.contextTokens,
        api_key: (await mesh.secrets.describeOne(
          { ownerType: 'model_provider', ownerId: p.id },
          'api_key',
        ))
          ? 'present'
          : 'absent',
      })),
    );
    if (values.json) io.out(JSON.stringify(rows, null, 2));
    else if (rows.length === 0) io.out('No providers yet: mesh providers add');
    else
      for (const r of rows)
        io.out(
          `${r.name}  ${r.kind}  ${r.base_url ?? '-'}  key ${r.kind === 'scripted' ? '-' : r.api_key}`,
        );
    return 0;
  });
}

/** `mesh providers …`: configure model providers (in the database, never the environment). */
export const providersCommand: Command = commandGroup({
  name: 'providers',
  summary: 'Add and list model providers',
  usage: USAGE,
  subcommands: { add, list },
});
