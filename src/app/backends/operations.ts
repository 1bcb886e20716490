import { nameField, NO_INPUT } from '../operations/fields.ts';
import { defineOperation } from '../operations/operation.ts';
import { browserBackends, modelProviders, webProviders, workspaceBackends } from './families.ts';
import { keyRotationOperation } from './key-rotation.ts';

/** Replacing the key of a model provider, a web provider or a workspace backend. */
export const providerKeyOperation = keyRotationOperation({
  group: 'providers',
  param: 'provider',
  path: '/api/providers/{provider}',
  tag: 'providers',
  family: modelProviders,
});

export const webProviderKeyOperation = keyRotationOperation({
  group: 'web',
  param: 'provider',
  path: '/api/web/providers/{provider}',
  tag: 'web',
  family: webProviders,
});

export const workspaceBackendKeyOperation = keyRotationOperation({
  group: 'workspaces',
  param: 'backend',
  path: '/api/workspaces/backends/{backend}',
  tag: 'workspaces',
  family: workspaceBackends,
});

export const browserBackendKeyOperation = keyRotationOperation({
  group: 'browsers',
  param: 'backend',
  path: '/api/browsers/backends/{backend}',
  tag: 'browsers',
  family: browserBackends,
});

/** A model provider as the API lists it (`providerJson`). */
export interface ProviderAnswer extends Record<string, unknown> {
  readonly name: string;
  readonly kind: string;
  readonly base_url: string | null;
  readonly api_key: { readonly present: boolean } | null;
}

export const listProvidersOperation = defineOperation({
  name: 'providers.list',
  summary: 'Model providers, with whether each API key is present (never the key)',
  tag: 'providers',
  input: NO_INPUT,
  errors: [],
  http: { method: 'GET', path: '/api/providers' },
  cli: {
    command: ['providers', 'list'],
    print: (out: { providers: readonly ProviderAnswer[] }) =>
      out.providers.length === 0
        ? ['No providers yet: mesh providers add']
        : out.providers.map(
            (p) =>
              `${p.name}  ${p.kind}  ${p.base_url ?? '-'}  key ${p.kind === 'scripted' ? '-' : p.api_key?.present ? 'present' : 'absent'}`,
          ),
  },
  async run(mesh): Promise<{ providers: ProviderAnswer[] }> {
    const [{ describeProviders }, { providerJson }] = await Promise.all([
      import('./model-providers.ts'),
      import('../views.ts'),
    ]);
    return {
      providers: (await describeProviders(mesh)).map((p) => providerJson(p) as ProviderAnswer),
    };
  },
});

const PROVIDER_NAME = nameField('the model provider, by name');

export const addProviderOperation = defineOperation({
  name: 'providers.add',
  summary:
    'Add a model provider: an OpenAI-compatible Chat Completions endpoint (OpenRouter, vLLM, Ollama, OpenAI) with its API key (stored encrypted), or a script',
  tag: 'providers',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: { ...PROVIDER_NAME, description: 'the name to add it under' },
      kind: {
        enum: ['openai_compatible', 'scripted'],
        description: 'openai_compatible, or scripted when a script is given',
      },
      base_url: {
        type: 'string',
        minLength: 1,
        maxLength: 2000,
        description: "the endpoint's root (https://…/v1)",
      },
      api_key: { type: 'string', minLength: 1, maxLength: 65536, description: 'the API key' },
      script: { type: 'object', description: 'a scripted model (JSON): rules and replies' },
      context_tokens: {
        type: 'integer',
        minimum: 1000,
        description: "the model's context window in tokens",
      },
    },
  },
  errors: ['invalid_provider', 'invalid_script', 'provider_exists'],
  http: { method: 'POST', path: '/api/providers', status: 201 },
  cli: {
    command: ['providers', 'add'],
    files: { api_key: 'api-key-file', script: 'scripted' },
    print: (p: ProviderAnswer) => [
      p.kind === 'scripted'
        ? `Added provider ${p.name} (${p.kind}).`
        : `Added provider ${p.name} (${p.kind}); its API key is stored encrypted.`,
    ],
  },
  async run(mesh, input): Promise<ProviderAnswer> {
    const [{ addModelProvider, describeProviders }, { providerJson }, { InvalidInputError }] =
      await Promise.all([
        import('./model-providers.ts'),
        import('../views.ts'),
        import('../operations/input.ts'),
      ]);
    const kind = input.kind ?? (input.script === undefined ? 'openai_compatible' : 'scripted');
    const contextTokens =
      input.context_tokens === undefined ? {} : { contextTokens: input.context_tokens };
    let added;
    if (kind === 'scripted') {
      if (input.script === undefined)
        throw new InvalidInputError('a scripted provider needs its `script`', 'input.script');
      for (const field of ['base_url', 'api_key'] as const)
        if (input[field] !== undefined)
          throw new InvalidInputError(
            `a scripted provider takes no \`${field}\``,
            `input.${field}`,
          );
      added = await addModelProvider(mesh, {
        name: input.name,
        kind,
        script: input.script,
        ...contextTokens,
      });
    } else {
      if (input.script !== undefined)
        throw new InvalidInputError('only a scripted provider takes a `script`', 'input.script');
      if (input.base_url === undefined)
        throw new InvalidInputError(
          'give the endpoint as `base_url`, or a script instead',
          'input.base_url',
        );
      // A key file's trailing newline is not part of the key.
      const apiKey = input.api_key?.trim() ?? '';
      if (apiKey === '')
        throw new InvalidInputError(
          'an OpenAI-compatible provider needs its `api_key`',
          'input.api_key',
        );
      added = await addModelProvider(mesh, {
        name: input.name,
        kind,
        baseUrl: input.base_url,
        apiKey,
        ...contextTokens,
      });
    }
    const described = (await describeProviders(mesh)).find((p) => p.id === added.id);
    return providerJson(described ?? { ...added, apiKey: null }) as ProviderAnswer;
  },
});

export const deleteProviderOperation = defineOperation({
  name: 'providers.delete',
  summary: 'Delete a model provider and retire its API key (refused while an agent uses it)',
  tag: 'providers',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['provider'],
    properties: { provider: PROVIDER_NAME },
  },
  errors: ['provider_not_found', 'provider_in_use'],
  http: { method: 'DELETE', path: '/api/providers/{provider}', status: 204 },
  cli: {
    command: ['providers', 'delete'],
    positionals: ['provider'],
    print: (_out: undefined, input) => [
      `Deleted provider ${String(input['provider'])} and revoked its API key.`,
    ],
  },
  async run(mesh, input): Promise<undefined> {
    const { deleteModelProvider } = await import('./model-providers.ts');
    await deleteModelProvider(mesh, input.provider);
    return undefined;
  },
});

/** The model providers' operations, in the order help lists them. */
export const providerOperations = [
  addProviderOperation,
  listProvidersOperation,
  deleteProviderOperation,
  providerKeyOperation,
] as const;
