import {
  addBrowserBackendOperation,
  grantBrowserBackendOperation,
  listBrowsersOperation,
  removeBrowserBackendOperation,
  revokeBrowserBackendOperation,
} from '../../app/backends/browser-operations.ts';
import { browserBackendKeyOperation } from '../../app/backends/operations.ts';
import { invokeOperation } from '../../app/operations/operation.ts';
import { listAgents } from '../../app/agents/reads.ts';
import { browsersPage, type BrowsersState } from './browser-pages.ts';
import { field, optional, param, post, type UiRoute } from './ui-route.ts';

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
    addBrowserBackendOperation,
    ({ form }) => ({
      name: field(form, 'name').trim(),
      kind: field(form, 'kind'),
      ...(field(form, 'development') === 'true' ? { development: true } : {}),
      ...optional(form, 'base_url'),
      ...optional(form, 'account_id'),
      ...optional(form, 'project_id'),
      ...optional(form, 'api_key'),
    }),
    (added) => ({ text: `Added browser backend ${added.name}.` }),
  ),
  post(
    '/browsers/backends/{backend}/key',
    () => '/browsers',
    browserBackendKeyOperation,
    (call) => ({ backend: param(call, 'backend'), value: field(call.form, 'value') }),
    (out) => ({ text: `Replaced the API key of ${out.name} (now version ${out.version}).` }),
  ),
  post(
    '/browsers/backends/{backend}/delete',
    () => '/browsers',
    removeBrowserBackendOperation,
    (call) => ({ backend: param(call, 'backend') }),
    (_, call) => ({ text: `Removed browser backend ${param(call, 'backend')}.` }),
  ),
  post(
    '/browsers/grants',
    () => '/browsers',
    grantBrowserBackendOperation,
    ({ form }) => ({
      agent: field(form, 'agent').trim(),
      backend: field(form, 'backend').trim(),
      ...(field(form, 'allow_loopback') === 'true' ? { allow_loopback: true } : {}),
    }),
    (granted) => ({ text: `Granted ${granted.agent} browser sessions on ${granted.backend}.` }),
  ),
  post(
    '/browsers/grants/{agent}/delete',
    () => '/browsers',
    revokeBrowserBackendOperation,
    (call) => ({ agent: param(call, 'agent') }),
    (out) => ({
      text: out.revoked ? `Revoked ${out.agent}'s browser backend.` : `${out.agent} had none.`,
    }),
  ),
];
