import { listAgents } from '../../app/agents/reads.ts';
import { workspaceBackendKeyOperation } from '../../app/backends/operations.ts';
import { WORKSPACE_KINDS } from '../../app/backends/kinds.ts';
import { describeWorkspaces } from '../../app/backends/workspace-admin.ts';
import {
  addWorkspaceBackendOperation,
  grantWorkspaceBackendOperation,
  removeWorkspaceBackendOperation,
} from '../../app/backends/workspace-operations.ts';
import { backendPosts } from './rented-backend-ui.ts';
import { field, post, type UiRoute } from './ui-route.ts';
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
  ...backendPosts({
    page: '/workspaces',
    family: WORKSPACE_KINDS,
    add: addWorkspaceBackendOperation,
    key: workspaceBackendKeyOperation,
    remove: removeWorkspaceBackendOperation,
  }),
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
