import { createHash } from 'node:crypto';
import type { Tool } from '../model/wire.ts';
import type { Definition, ToolClass } from '../tool/definition.ts';
import { TOOL_SEARCH_PACKAGE } from './tool-search.ts';

/**
 * One of Mesh's own parking verbs as a definition: offered by the engine, never executed — the
 * engine parks the run on its call (`parks`), and what a person does becomes its observation.
 */
export function parkingVerb(tool: Tool, toolClass: ToolClass): Definition {
  return Object.freeze({
    tool,
    class: toolClass,
    replay: 'internal',
    needs: [],
    parks: true,
    origin: {
      source: 'first_party',
      packageId: TOOL_SEARCH_PACKAGE,
      version: '1.0.0',
      digest: createHash('sha256').update(JSON.stringify(tool)).digest('hex'),
    },
    execute: () =>
      Promise.resolve({
        text: `${tool.name} is answered in a conversation; it cannot be run on its own`,
        isError: true,
      }),
  } satisfies Definition);
}
