import { requireAgent } from '../../app/agents.ts';
import {
  agentPackages,
  packageView,
  packageViews,
  requirePackage,
  setAgentAudiences,
  setAgentToolEnabled,
} from '../../app/packages.ts';
import { agentPackageJson } from '../../app/views.ts';
import { closedObject } from '../router.ts';
import { route, type Route } from './context.ts';

/** The packages as installed for one agent: enablement, config values, secrets, audiences. */
export const policyRoutes: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/agents/{agent}/packages',
    operationId: 'listAgentPackages',
    summary:
      'Every package as installed for an agent: enablement, config values, secret presence, and per audience whether each tool is offered (or why not)',
    tag: 'policy',
    handle: async ({ context, params }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      return { packages: (await agentPackages(context.mesh, agent)).map(agentPackageJson) };
    },
  }),
  route({
    method: 'PUT',
    path: '/api/agents/{agent}/tools/{tool}',
    operationId: 'setAgentTool',
    summary: 'Enable or disable (opt out of) a built-in tool for an agent',
    tag: 'policy',
    status: 204,
    body: closedObject({ enabled: { type: 'boolean' } }, ['enabled']),
    handle: async ({ context, params, body }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      await setAgentToolEnabled(context.mesh, agent, params['tool'] ?? '', body.enabled);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/agents/{agent}/packages/{package}/audiences',
    operationId: 'setAgentAudiences',
    summary:
      "Limit a package's tools to some conversation audiences for an agent (null lifts the limit)",
    tag: 'policy',
    status: 204,
    body: closedObject(
      {
        audiences: {
          anyOf: [
            {
              type: 'array',
              items: { enum: ['direct', 'shared'] },
              maxItems: 2,
              uniqueItems: true,
            },
            { type: 'null' },
          ],
        },
      },
      ['audiences'],
    ),
    handle: async ({ context, params, body }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      await setAgentAudiences(
        context.mesh,
        agent,
        params['package'] ?? '',
        body.audiences ?? undefined,
      );
    },
  }),
];

/** The packages as their manifests declare them. */
export const packageRoutes: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/packages',
    operationId: 'listPackages',
    summary: 'Installed tool packages and their tools, as their manifests declare them',
    tag: 'packages',
    handle: async ({ context }) => ({ packages: packageViews(context.mesh) }),
  }),
  route({
    method: 'GET',
    path: '/api/packages/{package}',
    operationId: 'getPackage',
    summary: 'One package as its manifest declares it',
    tag: 'packages',
    handle: async ({ context, params }) =>
      packageView(context.mesh, requirePackage(context.mesh, params['package'] ?? '')),
  }),
];
