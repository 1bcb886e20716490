import type { ModelProviderRecord } from '../../store/model-providers.ts';
import type { QueryProviderRecord } from '../../store/query-providers.ts';
import type { ExecutionBackendRecord } from '../../store/workspaces.ts';
import type { BrowserBackendRecord } from '../../store/browsers.ts';
import { backendFamily } from './family.ts';

/*
 * The families of registered backends. Each reads its records through a lazily imported
 * store module, so declaring a face (the CLI's help) loads no database driver.
 */

export const modelProviders = backendFamily<ModelProviderRecord>({
  noun: 'model provider',
  listedBy: 'mesh providers list',
  ownerType: 'model_provider',
  notFound: 'provider_not_found',
  async find(mesh, name) {
    return (await import('../../store/model-providers.ts')).findModelProvider(mesh.db, name);
  },
  noKey: (p) =>
    p.kind === 'openai_compatible' ? undefined : `${p.name} is scripted and takes no API key`,
});

export const webProviders = backendFamily<QueryProviderRecord>({
  noun: 'web provider',
  listedBy: 'mesh web list',
  ownerType: 'tool_provider',
  notFound: 'web_provider_not_found',
  async find(mesh, name) {
    return (await import('../../store/query-providers.ts')).findQueryProvider(mesh.db, name);
  },
});

export const workspaceBackends = backendFamily<ExecutionBackendRecord>({
  noun: 'workspace backend',
  listedBy: 'mesh workspaces list',
  ownerType: 'execution_backend',
  notFound: 'backend_not_found',
  async find(mesh, name) {
    return (await import('../../store/workspaces.ts')).findExecutionBackend(mesh.db, name);
  },
  noKey: (b) =>
    b.kind === 'e2b' ? undefined : `${b.name} is a ${b.kind} backend and takes no API key`,
});

export const browserBackends = backendFamily<BrowserBackendRecord>({
  noun: 'browser backend',
  listedBy: 'mesh browsers list',
  ownerType: 'browser_backend',
  notFound: 'backend_not_found',
  async find(mesh, name) {
    return (await import('../../store/browsers.ts')).findBrowserBackend(mesh.db, name);
  },
  noKey: (b) =>
    b.kind === 'local' ? `${b.name} is a local backend and takes no API key` : undefined,
});
