import {
  addBrowserBackendOperation,
  grantBrowserBackendOperation,
  listBrowsersOperation,
  removeBrowserBackendOperation,
  revokeBrowserBackendOperation,
} from '../../app/backends/browser-operations.ts';
import { invokeOperation } from '../../app/operations/operation.ts';
import { listAgents } from '../../app/agents/reads.ts';
import { browsersPage, type BrowsersState } from './browser-pages.ts';
import { field, post, type UiRoute } from './ui-route.ts';

/** A form's optional text field: absent when left blank. */
function optional(form: URLSearchParams, name: string): Record<string, string> {
  const value = field(form, name).trim();
  return value === '' ? {} : { [name]: value };
}

/** The browsers page: backends, grants and live sessions, through the browsers operations. */
export const browserRoutes: readonly UiRoute[] = [
  {
    method: 'GET',
    path: '/browsers',
    handle: async ({ mesh, session }) => ({
      page: browsersPage(
        session,
        await invokeOperation<BrowsersState>(mesh, listBrowsersOperation, {}, session),
        (await listAgents(mesh)).map((a) => a.name),
      ),
    }),
  },
  post(
    '/browsers/backends',
    () => '/browsers',
    async ({ mesh, form, session }) => {
      const added = await invokeOperation(
        mesh,
        addBrowserBackendOperation,
        {
          name: field(form, 'name').trim(),
          kind: field(form, 'kind'),
          ...(field(form, 'development') === 'true' ? { development: true } : {}),
          ...optional(form, 'base_url'),
          ...optional(form, 'account_id'),
          ...optional(form, 'project_id'),
          ...optional(form, 'api_key'),
        },
        session,
      );
      return { text: `Added browser backend ${added.name}.` };
    },
  ),
  post(
    '/browsers/backends/{backend}/delete',
    () => '/browsers',
    async ({ mesh, params, session }) => {
      const backend = params['backend'] ?? '';
      await invokeOperation(mesh, removeBrowserBackendOperation, { backend }, session);
      return { text: `Removed browser backend ${backend}.` };
    },
  ),
  post(
    '/browsers/grants',
    () => '/browsers',
    async ({ mesh, form, session }) => {
      const granted = await invokeOperation(
        mesh,
        grantBrowserBackendOperation,
        {
          agent: field(form, 'agent').trim(),
          backend: field(form, 'backend').trim(),
          ...(field(form, 'allow_loopback') === 'true' ? { allow_loopback: true } : {}),
        },
        session,
      );
      return { text: `Granted ${granted.agent} browser sessions on ${granted.backend}.` };
    },
  ),
  post(
    '/browsers/grants/{agent}/delete',
    () => '/browsers',
    async ({ mesh, params, session }) => {
      const out = await invokeOperation(
        mesh,
        revokeBrowserBackendOperation,
        { agent: params['agent'] ?? '' },
        session,
      );
      return {
        text: out.revoked ? `Revoked ${out.agent}'s browser backend.` : `${out.agent} had none.`,
      };
    },
  ),
];
