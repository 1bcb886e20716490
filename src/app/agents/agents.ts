import { randomUUID } from 'node:crypto';
import type { AgentRecord } from '../../run/records.ts';
import {
  countUnfinishedRuns,
  deleteAgentRow,
  findAgent,
  insertAgent,
  setModelImageInput,
  updateAgentRow,
} from '../../store/agents.ts';
import { findModelProvider } from '../../store/model-providers.ts';
import { MeshError, quoteName } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';

/**
 * Agents as the operator creates and names them. Like every use case here, each refuses bad
 * input with a MeshError whose message names what was wrong, never a value.
 */

/** The agent a name or id names, or a typed refusal. */
export async function requireAgent(mesh: Mesh, nameOrId: string): Promise<AgentRecord> {
  const agent = await findAgent(mesh.db, nameOrId);
  if (!agent) throw new MeshError('agent_not_found', `no agent named ${quoteName(nameOrId)}`);
  return agent;
}

/** Creates an agent, optionally bound to a model provider and model. */
export async function createAgent(
  mesh: Mesh,
  input: {
    name: string;
    provider?: string;
    model?: string;
    persona?: string | null;
    imageInput?: boolean;
  },
): Promise<AgentRecord> {
  if ((input.provider === undefined) !== (input.model === undefined))
    throw new MeshError('invalid_agent', 'a provider and a model go together');
  let providerId: string | null = null;
  if (input.provider !== undefined) {
    const provider = await findModelProvider(mesh.db, input.provider);
    if (!provider)
      throw new MeshError(
        'provider_not_found',
        `no model provider named ${JSON.stringify(input.provider)}`,
      );
    providerId = provider.id;
  }
  return insertAgent(mesh.db, {
    id: randomUUID(),
    name: input.name,
    persona: input.persona ?? null,
    modelProviderId: providerId,
    model: input.model ?? null,
    modelImageInput: input.imageInput ?? false,
  });
}

/**
 * Says whether an agent's model accepts image input. When it does, the images tools return are
 * added to the model's next request; a model that does not accept images would refuse it.
 */
export async function setAgentImageInput(
  mesh: Mesh,
  nameOrId: string,
  accepts: boolean,
): Promise<AgentRecord> {
  const agent = await requireAgent(mesh, nameOrId);
  const updated = await setModelImageInput(mesh.db, agent.id, accepts);
  if (!updated)
    throw new MeshError('agent_not_found', `no agent named ${JSON.stringify(nameOrId)}`);
  return updated;
}

/**
 * Changes an agent: its model provider and model (together, or the model alone on the provider it
 * has), its persona (an empty one clears it) and whether its model accepts image input. Runs
 * already under way read the agent as it is at their next model request.
 */
export async function updateAgent(
  mesh: Mesh,
  nameOrId: string,
  input: { provider?: string; model?: string; persona?: string | null; imageInput?: boolean },
): Promise<AgentRecord> {
  if (Object.values(input).every((v) => v === undefined))
    throw new MeshError(
      'invalid_agent',
      'name at least one change: provider, model, persona or image input',
      // The input as a whole is what names no change.
      { field: 'input' },
    );
  const agent = await requireAgent(mesh, nameOrId);
  let providerId = agent.modelProviderId;
  if (input.provider !== undefined) {
    const provider = await findModelProvider(mesh.db, input.provider);
    if (!provider)
      throw new MeshError(
        'provider_not_found',
        `no model provider named ${quoteName(input.provider)}`,
      );
    providerId = provider.id;
  }
  const model = input.model ?? agent.model;
  if ((providerId === null) !== (model === null))
    throw new MeshError(
      'invalid_agent',
      providerId === null
        ? 'a model needs a provider: give `provider` too'
        : 'a provider needs a model: give `model` too',
    );
  const updated = await updateAgentRow(mesh.db, agent.id, {
    ...(input.provider === undefined ? {} : { modelProviderId: providerId }),
    ...(input.model === undefined ? {} : { model }),
    ...(input.persona === undefined ? {} : { persona: input.persona || null }),
    ...(input.imageInput === undefined ? {} : { modelImageInput: input.imageInput }),
  });
  if (!updated) throw new MeshError('agent_not_found', `no agent named ${quoteName(nameOrId)}`);
  return updated;
}

/**
 * Deletes an agent with everything that is its own — conversations, runs and their steps,
 * memories, tool policy, remote bindings — and retires every secret it owns (its package secrets
 * and its remote credentials), in one transaction. Refused while any of its runs is unfinished:
 * a worker would otherwise lose the run it holds.
 */
export async function deleteAgent(mesh: Mesh, nameOrId: string): Promise<void> {
  const agent = await requireAgent(mesh, nameOrId);
  await mesh.transaction(async ({ db, secrets }) => {
    const unfinished = await countUnfinishedRuns(db, agent.id);
    if (unfinished > 0)
      throw new MeshError(
        'agent_busy',
        `agent ${agent.name} has ${unfinished} unfinished run${unfinished === 1 ? '' : 's'}; delete it once they end`,
      );
    await secrets.retireOwners({ ownerType: 'agent', ownerId: agent.id });
    await secrets.retireOwners({ ownerType: 'agent_tool', ownerIdPrefix: `${agent.id}:` });
    await secrets.retireOwners({ ownerType: 'agent_tool_provider', ownerIdPrefix: `${agent.id}:` });
    await deleteAgentRow(db, agent.id);
  });
  for (const key of mesh.mcp.oauthStores.keys())
    if (key.startsWith(`${agent.id}:`)) mesh.mcp.oauthStores.delete(key);
}

/** The names of at most a few agents, for a refusal that says who is in the way. */
export function someNames(names: readonly string[]): string {
  const shown = names.slice(0, 3).join(', ');
  return names.length > 3 ? `${shown} and ${names.length - 3} more` : shown;
}
