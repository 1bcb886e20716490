import { defineOperation } from '../operations/operation.ts';
import { keyRotationOperation } from './key-rotation.ts';

/** Replacing the key of a model provider, a web provider or a workspace backend. */
export const providerKeyOperation = keyRotationOperation({
  group: 'providers',
  noun: 'model provider',
  param: 'provider',
  path: '/api/providers/{provider}',
  tag: 'providers',
  ownerType: 'model_provider',
  notFound: 'provider_not_found',
  async find(mesh, name) {
    const { findModelProvider } = await import('../../store/model-providers.ts');
    const p = await findModelProvider(mesh.db, name);
    if (!p) return undefined;
    return p.kind === 'openai_compatible'
      ? p
      : { ...p, noKey: `${p.name} is scripted and takes no API key` };
  },
});

export const webProviderKeyOperation = keyRotationOperation({
  group: 'web',
  noun: 'web provider',
  param: 'provider',
  path: '/api/web/providers/{provider}',
  tag: 'web',
  ownerType: 'tool_provider',
  notFound: 'web_provider_not_found',
  async find(mesh, name) {
    const { findQueryProvider } = await import('../../store/query-providers.ts');
    return findQueryProvider(mesh.db, name);
  },
});

export const workspaceBackendKeyOperation = keyRotationOperation({
  group: 'workspaces',
  noun: 'workspace backend',
  param: 'backend',
  path: '/api/workspaces/backends/{backend}',
  tag: 'workspaces',
  ownerType: 'execution_backend',
  notFound: 'backend_not_found',
  async find(mesh, name) {
    const { findExecutionBackend } = await import('../../store/workspaces.ts');
    const b = await findExecutionBackend(mesh.db, name);
    if (!b) return undefined;
    return b.kind === 'e2b'
      ? b
      : { ...b, noKey: `${b.name} is a ${b.kind} backend and takes no API key` };
  },
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
  input: { type: 'object', additionalProperties: false, required: [], properties: {} },
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
      import('../model-providers.ts'),
      import('../views.ts'),
    ]);
    return {
      providers: (await describeProviders(mesh)).map((p) => providerJson(p) as ProviderAnswer),
    };
  },
});
