import { MAX_QUERY_CHARS, searchAgentTools } from '../../app/agent-tool-search.ts';
import { HttpError } from '../http-error.ts';
import { route, type Route } from './context.ts';

const MAX_LIMIT = 50;

const RESULT = {
  type: 'object',
  required: ['name', 'score', 'description'],
  properties: {
    name: { type: 'string', description: 'The name as offered to the model' },
    package: { type: 'string', description: 'The first-party package (built-in tools)' },
    provider: { type: 'string', description: "The remote MCP server's slug (remote tools)" },
    score: { type: 'number', description: 'BM25+ relevance; comparable within one search' },
    description: { type: 'string', description: 'The first sentence of its description' },
  },
} as const;

/** The `limit` of a search: 5 unless given, at most {@link MAX_LIMIT}. */
function searchLimit(query: URLSearchParams): number {
  const raw = query.get('limit');
  if (raw === null) return 5;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > MAX_LIMIT)
    throw new HttpError(
      'invalid_query',
      `limit must be an integer from 1 to ${MAX_LIMIT}`,
      {},
      { field: 'query.limit' },
    );
  return n;
}

/** Progressive loading's search, as an operator asks it for an agent. */
export const toolSearchRoutes: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/agents/{agent}/tools/search',
    operationId: 'searchAgentTools',
    summary:
      "Rank the operations the agent's tool_search would load for a need, best first (its own verbs aside)",
    tag: 'tools',
    query: {
      q: {
        description: 'What the agent needs, in words.',
        schema: { type: 'string', minLength: 1, maxLength: MAX_QUERY_CHARS },
      },
      limit: {
        description: `How many operations to return (1-${MAX_LIMIT}, default 5).`,
        schema: { type: 'integer', minimum: 1, maximum: MAX_LIMIT },
      },
    },
    response: {
      type: 'object',
      required: ['results'],
      properties: { results: { type: 'array', items: RESULT } },
    },
    handle: async ({ context, params, query }) => {
      const q = query.get('q');
      if (q === null || q.trim() === '')
        throw new HttpError(
          'invalid_query',
          'q is required: what to search for',
          {},
          {
            field: 'query.q',
          },
        );
      if (q.length > MAX_QUERY_CHARS)
        throw new HttpError(
          'invalid_query',
          `q must have at most ${MAX_QUERY_CHARS} characters`,
          {},
          { field: 'query.q' },
        );
      return {
        results: await searchAgentTools(context.mesh, params['agent'] ?? '', q, searchLimit(query)),
      };
    },
  }),
];
