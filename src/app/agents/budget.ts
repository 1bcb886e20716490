import type { JsonObject } from '../../model/json.ts';
import { budgetFrom, type Budget } from '../../run/budget.ts';
import type { AgentRecord } from '../../run/records.ts';
import { setAgentBudgetRow } from '../../store/agents.ts';
import { MeshError } from '../../tool/errors.ts';
import type { Mesh } from '../mesh.ts';
import { requireAgent } from './agents.ts';

/** The budget an agent's next run copies: its profile, defaults where it sets nothing. */
export function agentBudget(agent: Pick<AgentRecord, 'budget'>): Budget {
  return budgetFrom(agent.budget);
}

/** The meters a profile sets. */
function setMeters(profile: JsonObject): (keyof Budget)[] {
  return Object.keys(profile) as (keyof Budget)[];
}

/**
 * Changes an agent's budget profile (after clearing it, with `reset`) and answers the budget in
 * force. The values were checked against their bounds by the operation; runs already created keep
 * the budget they copied.
 */
export async function setAgentBudget(
  mesh: Mesh,
  name: string,
  input: { readonly changes: Partial<Record<keyof Budget, number>>; readonly reset: boolean },
): Promise<{ agent: AgentRecord; budget: Budget; set: (keyof Budget)[] }> {
  const agent = await requireAgent(mesh, name);
  const changed = input.reset || Object.keys(input.changes).length > 0;
  const profile: JsonObject = { ...(input.reset ? {} : agent.budget), ...input.changes };
  const updated = changed ? await setAgentBudgetRow(mesh.db, agent.id, profile) : agent;
  if (!updated) throw new MeshError('agent_not_found', `no agent named ${JSON.stringify(name)}`);
  return { agent: updated, budget: agentBudget(updated), set: setMeters(updated.budget) };
}
