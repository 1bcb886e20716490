import { AGENT_FIELD, AGENT_INPUT, NO_INPUT, nameField } from '../operations/fields.ts';
import type { Commitment } from '../../../tools/agent/agent-services.ts';
import { defineOperation } from '../operations/operation.ts';
import { agentJson, isoText } from '../views.ts';
import { agentMemoriesOperation } from './memory-operation.ts';
import { agentBudgetOperation } from './budget-operation.ts';

/** An agent as the API answers it (`agentJson`). */
export interface AgentAnswer extends Record<string, unknown> {
  readonly name: string;
  readonly model_provider_id: string | null;
  readonly model: string | null;
  readonly persona: string | null;
  readonly image_input: boolean;
}

/** An agent as `agents.show` answers: with what it promised to do later and has not done. */
export interface AgentShown extends AgentAnswer {
  readonly commitments: readonly Commitment[];
}

/** A text on one terminal line, cut at 100 characters. */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 100 ? `${flat.slice(0, 99)}…` : flat;
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
      agent: AGENT_FIELD,
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
  input: NO_INPUT,
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
    const { listAgents } = await import('./reads.ts');
    return { agents: (await listAgents(mesh)).map((a) => agentJson(a) as AgentAnswer) };
  },
});

export const createAgentOperation = defineOperation({
  name: 'agents.create',
  summary: 'Create an agent, optionally bound to a model provider and model',
  tag: 'agents',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['name'],
    properties: {
      name: nameField('the name to create it under'),
      provider: {
        type: 'string',
        minLength: 1,
        maxLength: 200,
        description: 'the model provider, by name (with a model)',
      },
      model: { type: 'string', minLength: 1, maxLength: 200, description: 'the model to ask' },
      persona: { type: 'string', maxLength: 20000, description: 'the persona (system prompt)' },
      image_input: {
        type: 'boolean',
        description: "whether the agent's model accepts images (default false)",
      },
    },
  },
  errors: ['invalid_agent', 'invalid_agent_name', 'provider_not_found', 'agent_exists'],
  http: { method: 'POST', path: '/api/agents', status: 201 },
  cli: {
    command: ['agents', 'create'],
    positionals: ['name'],
    files: { persona: 'persona' },
    switches: ['image_input'],
    print: (a: AgentAnswer) => [
      `Created agent ${a.name} (${String(a['id'])})${a.model ? ` using ${a.model}` : ''}.`,
    ],
  },
  async run(mesh, input): Promise<AgentAnswer> {
    const { createAgent } = await import('./agents.ts');
    const { image_input: imageInput, ...rest } = input;
    return agentJson(
      await createAgent(mesh, { ...rest, ...(imageInput === undefined ? {} : { imageInput }) }),
    ) as AgentAnswer;
  },
});

export const showAgentOperation = defineOperation({
  name: 'agents.show',
  summary: 'One agent, by name or id',
  tag: 'agents',
  input: AGENT_INPUT,
  errors: ['agent_not_found'],
  http: { method: 'GET', path: '/api/agents/{agent}' },
  cli: {
    command: ['agents', 'show'],
    positionals: ['agent'],
    print: (a: AgentShown) => [
      `${a.name}  ${String(a['id'])}`,
      `  model: ${a.model ?? 'none'}`,
      `  image input: ${a.image_input ? 'on' : 'off'}`,
      `  persona: ${a.persona === null ? 'none' : `${a.persona.length} characters`}`,
      `  created: ${isoText(a['created_at'] as Date | string)}`,
      a.commitments.length === 0
        ? '  open commitments: none'
        : `  open commitments (${a.commitments.length}):`,
      ...a.commitments.map(
        (c) => `    ${c.id}  ${c.due ? `due ${c.due}` : 'no due time'}  ${oneLine(c.text)}`,
      ),
    ],
  },
  async run(mesh, input): Promise<AgentShown> {
    const [{ requireAgent }, { agentCommitments }] = await Promise.all([
      import('./agents.ts'),
      import('./commitments.ts'),
    ]);
    const agent = await requireAgent(mesh, input.agent);
    const commitments = await agentCommitments(mesh, agent.id);
    return { ...(agentJson(agent) as AgentAnswer), commitments };
  },
});

export const agentImageInputOperation = defineOperation({
  name: 'agents.image-input',
  summary:
    "Say whether the agent's model accepts image input: images tools return are then added to its next request",
  tag: 'agents',
  input: {
    type: 'object',
    additionalProperties: false,
    required: ['agent', 'image_input'],
    properties: {
      agent: AGENT_FIELD,
      image_input: { type: 'boolean', description: "whether the agent's model accepts images" },
    },
  },
  errors: ['agent_not_found'],
  http: { method: 'PUT', path: '/api/agents/{agent}/image-input' },
  cli: {
    command: ['agents', 'image-input'],
    positionals: ['agent', 'image_input'],
    print: (a: AgentAnswer) => [
      `${a.name}'s model ${a.image_input ? 'accepts' : 'does not accept'} image input: images tools return ${a.image_input ? 'are' : 'are not'} shown to it.`,
    ],
  },
  async run(mesh, input): Promise<AgentAnswer> {
    const { setAgentImageInput } = await import('./agents.ts');
    return agentJson(await setAgentImageInput(mesh, input.agent, input.image_input)) as AgentAnswer;
  },
});

export const deleteAgentOperation = defineOperation({
  name: 'agents.delete',
  summary:
    'Delete an agent with its conversations, runs, memories, tool policy and remote bindings, and retire its secrets (refused while a run is unfinished)',
  tag: 'agents',
  input: AGENT_INPUT,
  errors: ['agent_not_found', 'agent_busy'],
  http: { method: 'DELETE', path: '/api/agents/{agent}', status: 204 },
  cli: {
    command: ['agents', 'delete'],
    positionals: ['agent'],
    confirm:
      'deleting an agent removes its conversations, runs, memories and connections and revokes its secrets',
    print: (_out: undefined, input) => [`Deleted agent ${String(input['agent'])}.`],
  },
  async run(mesh, input): Promise<undefined> {
    const { deleteAgent } = await import('./agents.ts');
    await deleteAgent(mesh, input.agent);
    return undefined;
  },
});

/** The agents' operations, in the order help lists them. */
export const agentOperations = [
  createAgentOperation,
  listAgentsOperation,
  showAgentOperation,
  updateAgentOperation,
  agentImageInputOperation,
  agentBudgetOperation,
  agentMemoriesOperation,
  deleteAgentOperation,
] as const;
