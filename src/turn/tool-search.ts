import { createHash } from 'node:crypto';
import type { JsonObject } from '../model/json.ts';
import type { Tool } from '../model/wire.ts';
import type { Definition, ToolOutput } from '../tool/definition.ts';
import { sourceLabel } from './integration-summary.ts';
import type { LoadChange } from './loaded-set.ts';
import type { ToolMatch } from './tool-index.ts';

/** The one verb a turn on the index adds: it is Mesh's own, like the memory verbs. */
export const TOOL_SEARCH = 'tool_search';
/** The package tool_search is recorded under (it has no manifest: the turn engine owns it). */
export const TOOL_SEARCH_PACKAGE = 'mesh.turn';

const PARAMETERS = {
  type: 'object',
  required: ['query'],
  additionalProperties: false,
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 500, description: 'What you need to do' },
  },
} as const;

/** The tool as the model sees it: what it does, and the summary of what it can find. */
export function toolSearchTool(summary: string): Tool {
  return Object.freeze({
    name: TOOL_SEARCH,
    description:
      'Find more operations; matches are offered from your next request.' +
      (summary === '' ? '' : ` Connected: ${summary}.`),
    parameters: PARAMETERS,
  });
}

/** tool_search as a definition whose handler is the turn's `search`. */
export function toolSearchDefinition(
  tool: Tool,
  search: (query: string) => Promise<ToolOutput>,
): Definition {
  return {
    tool,
    class: 'query',
    replay: 'replayable',
    needs: [],
    origin: {
      source: 'first_party',
      packageId: TOOL_SEARCH_PACKAGE,
      version: '1.0.0',
      digest: createHash('sha256').update(JSON.stringify(tool)).digest('hex'),
    },
    execute: async (_ctx, args) => {
      const query = args['query'];
      return search(typeof query === 'string' ? query : '');
    },
  };
}

/** A search's matches and what loading them did, as the model reads it. */
export function searchOutput(matches: readonly ToolMatch[], change: LoadChange): ToolOutput {
  const kept = new Set([...change.loaded, ...change.refreshed]);
  const lines =
    matches.length === 0
      ? ['No operation matched. Try other words, or the names of the connected integrations.']
      : [
          'Offered from your next request on:',
          ...matches
            .filter((m) => kept.has(m.name))
            .map((m) => `- ${m.name} (${sourceLabel(m.source)}): ${m.description}`),
        ];
  if (change.unloaded.length > 0)
    lines.push(
      `Unloaded to make room, no longer offered (search again to use them): ${change.unloaded.join(', ')}.`,
    );
  if (change.skipped.length > 0)
    lines.push(`Also matched but not loaded, for lack of room: ${change.skipped.join(', ')}.`);
  const data: JsonObject = {
    results: matches.map((m) => ({
      name: m.name,
      description: m.description,
      [m.source.kind]: sourceLabel(m.source),
      score: Math.round(m.score * 1000) / 1000,
    })),
    loaded: [...change.loaded],
    refreshed: [...change.refreshed],
    unloaded: [...change.unloaded],
    skipped: [...change.skipped],
  };
  return { text: lines.join('\n'), data };
}
