import { listAgents } from '../../app/agents/reads.ts';
import { workspaceBackendKeyOperation } from '../../app/backends/operations.ts';
import { describeWorkspaces } from '../../app/backends/workspace-admin.ts';
import {
  addWorkspaceBackendOperation,
  grantWorkspaceBackendOperation,
  removeWorkspaceBackendOperation,
} from '../../app/backends/workspace-operations.ts';
import { field, optional, param, post, type UiRoute } from './ui-route.ts';
import { workspacesPage } from './workspace-pages.ts';

/** The workspaces page: backends, grants and live workspaces. */
export const workspaceRoutes: readonly UiRoute[] = [
  {
    method: 'GET',
    path: '/workspaces',
    handle: async ({ mesh, session }) => ({
      page: workspacesPage(
        session,
        await describeWorkspaces(mesh),
        (await listAgents(mesh)).map((a) => a.name),
      ),
    }),
  },
  post(
    '/workspaces/backends',
    () => '/workspaces',
    addWorkspaceBackendOperation,
    ({ form }) => ({
      name: field(form, 'name').trim(),
      kind: field(form, 'kind'),
      development: field(form, 'development') === 'true',
      ...optional(form, 'api_url'),
      ...optional(form, 'api_key'),
    }),
    (_, { form }) => ({ text: `Added backend ${field(form, 'name').trim()}.` }),
  ),
  post(
    '/workspaces/backends/{backend}/key',
    () => '/workspaces',
    workspaceBackendKeyOperation,
    (call) => ({ backend: param(call, 'backend'), value: field(call.form, 'value') }),
    (out) => ({ text: `Replaced the API key of ${out.name} (now version ${out.version}).` }),
  ),
  post(
    '/workspaces/backends/{backend}/delete',
    () => '/workspaces',
    removeWorkspaceBackendOperation,
    (call) => ({ backend: param(call, 'backend') }),
    (_, call) => ({ text: `Removed backend ${param(call, 'backend')}.` }),
  ),
  post(
    '/workspaces/grants',
    () => '/workspaces',
    grantWorkspaceBackendOperation,
    ({ form }) => ({
      agent: field(form, 'agent').trim(),
      backend: field(form, 'backend').trim(),
      allow_hosts: field(form, 'allow_hosts')
        .split(/\r?\n/)
        .map((h) => h.trim())
        .filter((h) => h !== ''),
    }),
    (_, { form }) => ({
      text: `Granted ${field(form, 'agent').trim()} workspaces on ${field(form, 'backend').trim()}.`,
    }),
  ),
];
