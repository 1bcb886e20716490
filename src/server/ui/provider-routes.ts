import {
  addModelProvider,
  deleteModelProvider,
  describeProviders,
  setProviderKey,
} from '../../app/backends/model-providers.ts';
import { packageViews } from '../../app/packages/packages.ts';
import { addToolProvider, removeToolProvider } from '../../app/mcp/providers.ts';
import { listToolProviders } from '../../app/mcp/provider-reads.ts';
import { MeshError } from '../../tool/errors.ts';
import { mcpProvidersSection } from './mcp-pages.ts';
import { html } from './html.ts';
import { layout } from './layout.ts';
import { packagesPage, providersPage } from './provider-pages.ts';
import { field, post, type UiRoute } from './ui-route.ts';

/** The providers page (model providers and remote MCP servers) and the packages page. */
export const providerRoutes: readonly UiRoute[] = [
  {
    method: 'GET',
    path: '/providers',
    handle: async ({ mesh, session }) => ({
      page: providersPage(session, await describeProviders(mesh)),
    }),
  },
  {
    // Remote MCP servers: a page of their own, in the nav (they are not model providers).
    method: 'GET',
    path: '/mcp',
    handle: async ({ mesh, session }) => ({
      page: layout(
        'MCP servers',
        session,
        html`<h1>MCP servers</h1>
          ${mcpProvidersSection(session, await listToolProviders(mesh))}`,
      ),
    }),
  },
  post(
    '/mcp/providers',
    () => '/mcp',
    async ({ mesh, form }) => {
      const provider = await addToolProvider(mesh, {
        slug: field(form, 'slug').trim(),
        url: field(form, 'url').trim(),
        allowLoopbackHttp: field(form, 'allow_loopback_http') === 'true',
      });
      return { text: `Registered ${provider.slug}.` };
    },
  ),
  post(
    '/providers',
    () => '/providers',
    async ({ mesh, form }) => {
      const name = field(form, 'name').trim();
      const contextText = field(form, 'context_tokens').trim();
      const contextTokens = contextText === '' ? undefined : Number(contextText);
      if (field(form, 'kind') === 'scripted') {
        let script: unknown;
        try {
          script = JSON.parse(field(form, 'script'));
        } catch {
          throw new MeshError('invalid_script', 'the script is not valid JSON');
        }
        await addModelProvider(mesh, { name, kind: 'scripted', script });
      } else {
        await addModelProvider(mesh, {
          name,
          kind: 'openai_compatible',
          baseUrl: field(form, 'base_url').trim(),
          apiKey: field(form, 'api_key'),
          ...(contextTokens === undefined ? {} : { contextTokens }),
        });
      }
      return { text: `Added provider ${name}.` };
    },
  ),
  post(
    '/providers/{provider}/api-key',
    () => '/providers',
    async ({ mesh, params, form }) => {
      const meta = await setProviderKey(mesh, params['provider'] ?? '', field(form, 'value'));
      return { text: `Replaced the API key of ${params['provider']} (version ${meta.version}).` };
    },
  ),
  post(
    '/providers/{provider}/delete',
    () => '/providers',
    async ({ mesh, params }) => {
      await deleteModelProvider(mesh, params['provider'] ?? '');
      return { text: `Deleted provider ${params['provider']}.` };
    },
  ),
  post(
    '/mcp/providers/{provider}/delete',
    () => '/mcp',
    async ({ mesh, params }) => {
      await removeToolProvider(mesh, params['provider'] ?? '');
      return { text: `Removed ${params['provider']}.` };
    },
  ),
  {
    method: 'GET',
    path: '/packages',
    handle: async ({ mesh, session }) => ({ page: packagesPage(session, packageViews(mesh)) }),
  },
];
