import type { JsonObject } from '../model/json.ts';
import type { Tool } from '../model/wire.ts';
import type { Definition, ToolOutput } from '../tool/definition.ts';
import { sourceLabel } from './integration-summary.ts';
import type { LoadChange } from './loaded-set.ts';
import type { ToolMatch } from './tool-index.ts';

/** The one verb a turn on the index adds: the agent's own (tools/agent/), like its memory verbs. */
export const TOOL_SEARCH = 'tool_search';

/**
 * The verb as a turn on the index offers it: its declaration (tools/agent/), with the summary of
 * what it can find appended to its description.
 */
export function toolSearchTool(declared: Tool, summary: string): Tool {
  return Object.freeze({
    ...declared,
    description: declared.description + (summary === '' ? '' : ` Connected: ${summary}.`),
  });
}

/**
 * tool_search as a turn on the index runs it: the declared definition (its class, replay, schema
 * and package pin), offered as `tool`, answered by the turn's own `search` (which loads what it
 * finds into the next request).
 */
export function toolSearchDefinition(
  declared: Definition,
  tool: Tool,
  search: (query: string) => Promise<ToolOutput>,
): Definition {
  return {
    ...declared,
    tool,
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
