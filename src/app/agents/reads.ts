import {
  findAgent as findAgentRow,
  getAgent as getAgentRow,
  listAgents as listAgentRows,
} from '../../store/agents.ts';
import { listMemories, type MemoryRow, type MemoryStatus } from '../../store/memories.ts';
import type { Mesh } from '../mesh.ts';
import type { AgentRecord } from '../records.ts';

/* The reads of agents and their memories that the faces make (CLI, API, UI). */

export function listAgents(mesh: Mesh): Promise<AgentRecord[]> {
  return listAgentRows(mesh.db);
}

export function getAgent(mesh: Mesh, id: string): Promise<AgentRecord | undefined> {
  return getAgentRow(mesh.db, id);
}

export function findAgent(mesh: Mesh, nameOrId: string): Promise<AgentRecord | undefined> {
  return findAgentRow(mesh.db, nameOrId);
}

export function agentMemories(
  mesh: Mesh,
  agentId: string,
  limit: number,
  status?: MemoryStatus,
): Promise<MemoryRow[]> {
  return listMemories(mesh.db, agentId, limit, status);
}
