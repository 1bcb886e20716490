import { MeshError } from '../../tool/errors.ts';
import { sourceLabel } from '../../turn/integration-summary.ts';
import { MAX_SEARCH_LIMIT } from '../../turn/tool-index.ts';
import { searchIndexOf } from '../../turn/tool-loading.ts';
import { requireAgent } from './agents.ts';
import type { Mesh } from '../mesh.ts';
import { turnPolicy } from '../packages/policy.ts';

/** One ranked operation, as the CLI's `--json` and the API print it. */
export interface ToolSearchResult {
  /** The name as offered to the model. */
  readonly name: string;
  /** The first-party package it belongs to, or (for a remote tool) the provider's slug. */
  readonly package?: string;
  readonly provider?: string;
  readonly score: number;
  readonly description: string;
}

/** The longest query a search takes (tool_search takes the same). */
export const MAX_QUERY_CHARS = 500;

/**
 * Ranks the operations an agent could load with tool_search, the same index and ranking, over
 * what offer-time policy allows it in a direct conversation (built-in and remote tools, its own
 * verbs aside: those are always offered).
 */
export async function searchAgentTools(
  mesh: Mesh,
  agentNameOrId: string,
  query: string,
  limit: number,
): Promise<ToolSearchResult[]> {
  if (query.trim() === '' || query.length > MAX_QUERY_CHARS)
    throw new MeshError(
      'invalid_search',
      `the query must have 1 to ${MAX_QUERY_CHARS} characters, not only spaces`,
    );
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT)
    throw new MeshError(
      'invalid_search',
      `the limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`,
    );
  const agent = await requireAgent(mesh, agentNameOrId);
  const { registry } = await turnPolicy(mesh, agent.id, 'direct');
  return searchIndexOf(registry)
    .search(query, limit)
    .map((m) => ({
      name: m.name,
      [m.source.kind]: sourceLabel(m.source),
      score: Math.round(m.score * 1000) / 1000,
      description: m.description,
    }));
}
