import { createAgent, deleteAgent, requireAgent, setAgentImageInput } from '../../app/agents.ts';
import { agentJson } from '../../app/views.ts';
import { closedObject } from '../router.ts';
import { NAME, route, type Route } from './context.ts';

/** The agents: list, create, read, delete. */
export const agentRoutes: readonly Route[] = [
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
        image_input: {
          type: 'boolean',
          description: "The agent's model accepts image input (default false)",
        },
      },
      ['name'],
    ),
    handle: async ({ context, body }) => {
      const { image_input: imageInput, ...rest } = body;
      return agentJson(
        await createAgent(context.mesh, {
          ...rest,
          ...(imageInput === undefined ? {} : { imageInput }),
        }),
      );
    },
  }),
  route({
    method: 'PUT',
    path: '/api/agents/{agent}/image-input',
    operationId: 'setAgentImageInput',
    summary:
      "Say whether the agent's model accepts image input: images tools return are then added to its next request",
    tag: 'agents',
    body: closedObject({ image_input: { type: 'boolean' } }, ['image_input']),
    handle: async ({ context, params, body }) =>
      agentJson(await setAgentImageInput(context.mesh, params['agent'] ?? '', body.image_input)),
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
  route({
    method: 'DELETE',
    path: '/api/agents/{agent}',
    operationId: 'deleteAgent',
    summary:
      'Delete an agent with its conversations, runs, memories, tool policy and remote bindings, and retire its secrets (refused while a run is unfinished)',
    tag: 'agents',
    status: 204,
    handle: async ({ context, params }) => {
      await deleteAgent(context.mesh, params['agent'] ?? '');
    },
  }),
];
