import { describeProviders } from '../../app/backends/model-providers.ts';
import {
  addProviderOperation,
  deleteProviderOperation,
  providerKeyOperation,
} from '../../app/backends/operations.ts';
import {
  addMcpProviderOperation,
  removeMcpProviderOperation,
} from '../../app/mcp/provider-operations.ts';
import { packageViews } from '../../app/packages/packages.ts';
import { listToolProviders } from '../../app/mcp/provider-reads.ts';
import { MeshError } from '../../tool/errors.ts';
import { mcpProvidersSection } from './mcp-pages.ts';
import { html } from './html.ts';
import { layout } from './layout.ts';
import { packagesPage, providersPage } from './provider-pages.ts';
import { field, param, post, wholeNumber, type UiRoute } from './ui-route.ts';

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
    addMcpProviderOperation,
    ({ form }) => ({
      slug: field(form, 'slug').trim(),
      url: field(form, 'url').trim(),
      allow_loopback_http: field(form, 'allow_loopback_http') === 'true',
    }),
    (_, { form }) => ({ text: `Registered ${field(form, 'slug').trim()}.` }),
  ),
  post(
    '/providers',
    () => '/providers',
    addProviderOperation,
    ({ form }) => {
      const name = field(form, 'name').trim();
      if (field(form, 'kind') === 'scripted') {
        let script: unknown;
        try {
          script = JSON.parse(field(form, 'script'));
        } catch {
          throw new MeshError('invalid_script', 'the script is not valid JSON', {
            field: 'script',
          });
        }
        return { name, kind: 'scripted', script };
      }
      return {
        name,
        kind: 'openai_compatible',
        base_url: field(form, 'base_url').trim(),
        api_key: field(form, 'api_key'),
        ...wholeNumber(form, 'context_tokens'),
      };
    },
    (_, { form }) => ({ text: `Added provider ${field(form, 'name').trim()}.` }),
  ),
  post(
    '/providers/{provider}/api-key',
    () => '/providers',
    providerKeyOperation,
    (call) => ({ provider: param(call, 'provider'), value: field(call.form, 'value') }),
    (meta, call) => ({
      text: `Replaced the API key of ${param(call, 'provider')} (version ${meta.version}).`,
    }),
  ),
  post(
    '/providers/{provider}/delete',
    () => '/providers',
    deleteProviderOperation,
    (call) => ({ provider: param(call, 'provider') }),
    (_, call) => ({ text: `Deleted provider ${param(call, 'provider')}.` }),
  ),
  post(
    '/mcp/providers/{provider}/delete',
    () => '/mcp',
    removeMcpProviderOperation,
    (call) => ({ provider: param(call, 'provider') }),
    (_, call) => ({ text: `Removed ${param(call, 'provider')}.` }),
  ),
  {
    method: 'GET',
    path: '/packages',
    handle: async ({ mesh, session }) => ({ page: packagesPage(session, packageViews(mesh)) }),
  },
];
