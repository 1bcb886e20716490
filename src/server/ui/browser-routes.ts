import {
  addBrowserBackendOperation,
  grantBrowserBackendOperation,
  listBrowsersOperation,
  removeBrowserBackendOperation,
  revokeBrowserBackendOperation,
} from '../../app/backends/browser-operations.ts';
import { BROWSER_KINDS } from '../../app/backends/kinds.ts';
import { browserBackendKeyOperation } from '../../app/backends/operations.ts';
import { invokeOperation } from '../../app/operations/operation.ts';
import { listAgents } from '../../app/agents/reads.ts';
import { browsersPage, type BrowsersState } from './browser-pages.ts';
import { backendPosts } from './rented-backend-ui.ts';
import { field, param, post, type UiRoute } from './ui-route.ts';

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
  ...backendPosts({
    page: '/browsers',
    family: BROWSER_KINDS,
    add: addBrowserBackendOperation,
    key: browserBackendKeyOperation,
    remove: removeBrowserBackendOperation,
  }),
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
