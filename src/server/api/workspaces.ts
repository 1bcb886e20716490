import {
  addBackend,
  describeWorkspaces,
  grantBackend,
  removeBackend,
  revokeBackend,
} from '../../app/workspace-admin.ts';
import { closedObject } from '../router.ts';
import { NAME, route, SECRET_VALUE, type Route } from './context.ts';

const HOST = { type: 'string', minLength: 1, maxLength: 260 } as const;

/** The execution layer: workspace backends, their grants, and the live workspaces. */
export const workspaceRoutes: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/workspaces',
    operationId: 'listWorkspaces',
    summary:
      'Workspace backends (development ones marked), grants with their egress allowlists, and live workspaces with run, age and compute-seconds',
    tag: 'workspaces',
    handle: async ({ context }) => {
      const state = await describeWorkspaces(context.mesh);
      return {
        backends: state.backends.map((b) => ({
          name: b.name,
          kind: b.kind,
          development: b.development,
          settings: b.settings,
          api_key: b.apiKey === null ? null : { present: b.apiKey },
        })),
        grants: state.grants,
        workspaces: state.workspaces.map((w) => ({
          id: w.id,
          run_id: w.run,
          agent: w.agent,
          backend: w.backend,
          state: w.state,
          run_status: w.runStatus,
          age_seconds: w.ageSeconds,
          compute_seconds: w.computeSeconds,
        })),
      };
    },
  }),
  route({
    method: 'POST',
    path: '/api/workspaces/backends',
    operationId: 'addWorkspaceBackend',
    summary:
      'Register a workspace backend: local (bubblewrap; development only, needs development: true) or e2b (its API key stored encrypted)',
    tag: 'workspaces',
    status: 201,
    body: closedObject(
      {
        name: NAME,
        kind: { enum: ['local', 'e2b'] },
        development: { type: 'boolean' },
        api_url: { type: 'string', minLength: 1, maxLength: 2000 },
        template: { type: 'string', minLength: 1, maxLength: 128 },
        api_key: SECRET_VALUE,
      },
      ['name', 'kind'],
    ),
    handle: async ({ context, body }) => {
      const added = await addBackend(context.mesh, {
        name: body.name,
        kind: body.kind,
        ...(body.development === undefined ? {} : { development: body.development }),
        ...(body.api_url === undefined ? {} : { apiUrl: body.api_url }),
        ...(body.template === undefined ? {} : { template: body.template }),
        ...(body.api_key === undefined ? {} : { apiKey: body.api_key }),
      });
      return { name: added.name, kind: added.kind, development: added.development };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/workspaces/backends/{backend}',
    operationId: 'removeWorkspaceBackend',
    summary: 'Remove a workspace backend with its grants and its API key',
    tag: 'workspaces',
    status: 204,
    handle: async ({ context, params }) => {
      await removeBackend(context.mesh, params['backend'] ?? '');
    },
  }),
  route({
    method: 'PUT',
    path: '/api/agents/{agent}/workspace-backend',
    operationId: 'grantWorkspaceBackend',
    summary:
      "Grant an agent a workspace backend and the hosts its workspaces may reach (host or host:port); replaces the agent's earlier grant",
    tag: 'workspaces',
    body: closedObject(
      {
        backend: NAME,
        allow_hosts: { type: 'array', items: HOST, maxItems: 64 },
      },
      ['backend'],
    ),
    handle: async ({ context, params, body }) =>
      grantBackend(context.mesh, {
        agent: params['agent'] ?? '',
        backend: body.backend,
        allowHosts: body.allow_hosts ?? [],
        operator: context.actor,
      }),
  }),
  route({
    method: 'DELETE',
    path: '/api/agents/{agent}/workspace-backend',
    operationId: 'revokeWorkspaceBackend',
    summary: "Revoke an agent's workspace backend: its workspace tools are no longer offered",
    tag: 'workspaces',
    status: 204,
    handle: async ({ context, params }) => {
      await revokeBackend(context.mesh, params['agent'] ?? '');
    },
  }),
];
