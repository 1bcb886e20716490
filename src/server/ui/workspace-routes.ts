import { listAgents } from '../../app/agents/reads.ts';
import { workspaceBackendKeyOperation } from '../../app/backends/operations.ts';
import { invokeOperation } from '../../app/operations/operation.ts';
import {
  addBackend,
  describeWorkspaces,
  grantBackend,
  removeBackend,
} from '../../app/backends/workspace-admin.ts';
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
  post(
    '/workspaces/backends',
    () => '/workspaces',
    async ({ mesh, form }) => {
      const apiUrl = field(form, 'api_url').trim();
      const apiKey = field(form, 'api_key').trim();
      const added = await addBackend(mesh, {
        name: field(form, 'name').trim(),
        kind: field(form, 'kind'),
        development: field(form, 'development') === 'true',
        ...(apiUrl === '' ? {} : { apiUrl }),
        ...(apiKey === '' ? {} : { apiKey }),
      });
      return { text: `Added backend ${added.name}.` };
    },
  ),
  post(
    '/workspaces/backends/{backend}/key',
    () => '/workspaces',
    async ({ mesh, params, form, session }) => {
      const out = await invokeOperation(
        mesh,
        workspaceBackendKeyOperation,
        { backend: params['backend'] ?? '', value: field(form, 'value') },
        session,
      );
      return { text: `Replaced the API key of ${out.name} (now version ${out.version}).` };
    },
  ),
  post(
    '/workspaces/backends/{backend}/delete',
    () => '/workspaces',
    async ({ mesh, params }) => {
      await removeBackend(mesh, params['backend'] ?? '');
      return { text: `Removed backend ${params['backend'] ?? ''}.` };
    },
  ),
  post(
    '/workspaces/grants',
    () => '/workspaces',
    async ({ mesh, form, session }) => {
      const granted = await grantBackend(mesh, {
        agent: field(form, 'agent').trim(),
        backend: field(form, 'backend').trim(),
        allowHosts: field(form, 'allow_hosts')
          .split(/\r?\n/)
          .map((h) => h.trim())
          .filter((h) => h !== ''),
        operator: session.actor,
      });
      return { text: `Granted ${granted.agent} workspaces on ${granted.backend}.` };
    },
  ),
];
