import { randomUUID } from 'node:crypto';
import type { AgentRecord } from '../run/records.ts';
import { findAgent, insertAgent } from '../store/agents.ts';
import { findModelProvider } from '../store/model-providers.ts';
import { MeshError, quoteName } from '../tool/errors.ts';
import type { Mesh } from './mesh.ts';

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
  input: { name: string; provider?: string; model?: string; persona?: string | null },
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
  });
}
