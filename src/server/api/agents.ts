import { createAgent, requireAgent } from '../../app/agents.ts';
import { listAgents } from '../../app/queries.ts';
import { agentJson } from '../../app/views.ts';
import { closedObject } from '../router.ts';
import { NAME, route, type Route } from './context.ts';

/** The agents: list, create, read. */
export const agentRoutes: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/agents',
    operationId: 'listAgents',
    summary: 'List agents',
    tag: 'agents',
    handle: async ({ context }) => ({
      agents: (await listAgents(context.mesh)).map(agentJson),
    }),
  }),
  route({
    method: 'POST',
    path: '/api/agents',
    operationId: 'createAgent',
    summary: 'Create an agent, optionally bound to a model provider and model',
    tag: 'agents',
    status: 201,
    body: closedObject(
      {
        name: NAME,
        provider: { type: 'string', minLength: 1, maxLength: 200 },
        model: { type: 'string', minLength: 1, maxLength: 200 },
        persona: { type: 'string', maxLength: 20000 },
      },
      ['name'],
    ),
    handle: async ({ context, body }) => agentJson(await createAgent(context.mesh, body)),
  }),
  route({
    method: 'GET',
    path: '/api/agents/{agent}',
    operationId: 'getAgent',
    summary: 'One agent, by name or id',
    tag: 'agents',
    handle: async ({ context, params }) =>
      agentJson(await requireAgent(context.mesh, params['agent'] ?? '')),
  }),
];
