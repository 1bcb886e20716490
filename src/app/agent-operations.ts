import { defineOperation } from './operations/operation.ts';
import { agentJson, isoText } from './views.ts';

/** An agent as the API answers it (`agentJson`). */
export interface AgentAnswer extends Record<string, unknown> {
  readonly name: string;
  readonly model_provider_id: string | null;
  readonly model: string | null;
  readonly persona: string | null;
  readonly image_input: boolean;
}

export const updateAgentOperation = defineOperation({
  name: 'agents.update',
  summary:
    "Change an agent's model provider and model, its persona, or whether its model takes images",
  description:
    'Fields left out stay as they are. A provider and a model go together: give both, or the model alone on the provider the agent has. An empty persona clears it.',
  tag: 'agents',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent'],
    properties: {
      agent: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: 'the agent, by name or id',
      },
      provider: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: 'the model provider, by name',
      },
      model: { type: 'string', minLength: 1, maxLength: 200, description: 'the model to ask' },
      persona: { type: 'string', maxLength: 20000, description: 'the persona (system prompt)' },
      image_input: { type: 'boolean', description: "whether the agent's model accepts images" },
    },
  },
  errors: ['agent_not_found', 'provider_not_found', 'invalid_agent'],
  http: { method: 'PATCH', path: '/api/agents/{agent}' },
  cli: {
    command: ['agents', 'update'],
    positionals: ['agent'],
    files: { persona: 'persona-file' },
    print: (a: AgentAnswer) => [
      `Updated agent ${a.name}: ${a.model ? `model ${a.model}` : 'no model'}, ${a.persona ? 'a persona' : 'no persona'}, image input ${a.image_input ? 'on' : 'off'}.`,
    ],
  },
  async run(mesh, input): Promise<AgentAnswer> {
    const { updateAgent } = await import('./agents.ts');
    const updated = await updateAgent(mesh, input.agent, {
      ...(input.provider === undefined ? {} : { provider: input.provider }),
      ...(input.model === undefined ? {} : { model: input.model }),
      ...(input.persona === undefined ? {} : { persona: input.persona }),
      ...(input.image_input === undefined ? {} : { imageInput: input.image_input }),
    });
    return agentJson(updated) as AgentAnswer;
  },
});

/** The agents, as the API lists them. */
export interface AgentListing {
  readonly agents: readonly AgentAnswer[];
}

export const listAgentsOperation = defineOperation({
  name: 'agents.list',
  summary: 'List agents, by name',
  tag: 'agents',
  input: { type: 'object', additionalProperties: false, required: [], properties: {} },
  errors: [],
  http: { method: 'GET', path: '/api/agents' },
  cli: {
    command: ['agents', 'list'],
    print: (out: AgentListing) =>
      out.agents.length === 0
        ? ['No agents yet: mesh agents create NAME']
        : out.agents.map(
            (a) =>
              `${a.name}  ${String(a['id'])}  ${a.model ?? 'no model'}  ${isoText(a['created_at'] as Date | string)}`,
          ),
  },
  async run(mesh): Promise<AgentListing> {
    const { listAgents } = await import('./queries.ts');
    return { agents: (await listAgents(mesh)).map((a) => agentJson(a) as AgentAnswer) };
  },
});
