import type { ToolRuntime } from '../tool/context.ts';
import { BROWSERS } from '../tool/browser.ts';
import type { Definition } from '../tool/definition.ts';
import { hasCode, serializeError } from '../tool/errors.ts';
import { BROWSER_HANDOFF, BROWSER_HANDOFF_DEFINITION, offersHandoff } from './browser-handoff.ts';
import { REQUEST_INPUT, REQUEST_INPUT_DEFINITION } from './request-input.ts';

/** A tool a turn does not offer, and why. */
export interface Withheld {
  readonly name: string;
  readonly reason: string;
}

/**
 * The turn's registry with Mesh's own parking verbs added: request_input always (there is always a
 * conversation to ask), browser_handoff beside the browser tools the agent was granted. A
 * package's tool of either name is withheld, said so.
 */
export function withOwnVerbs(
  granted: readonly Definition[],
  withheld: readonly Withheld[],
): { definitions: Definition[]; withheld: Withheld[] } {
  const own = [
    REQUEST_INPUT_DEFINITION,
    ...(offersHandoff(granted) ? [BROWSER_HANDOFF_DEFINITION] : []),
  ];
  const names = new Set([REQUEST_INPUT, BROWSER_HANDOFF]);
  const clashes = granted.filter((d) => names.has(d.tool.name));
  return {
    definitions: [...granted.filter((d) => !names.has(d.tool.name)), ...own],
    withheld: [
      ...withheld,
      ...clashes.map((d) => ({
        name: d.tool.name,
        reason: `the name is Mesh's own verb; the tool of that name from ${d.origin.packageId} is not offered`,
      })),
    ],
  };
}

/**
 * Readies the run's browser session for a person, before the run parks on a handoff: the Live
 * View link to post, or why no one could take the browser over (the model is told, and goes on).
 */
export async function readyHandoff(
  runtime: ToolRuntime,
): Promise<{ link: string } | { refused: string }> {
  if (!runtime.services.has(BROWSERS)) return { refused: 'this runtime has no browser layer' };
  try {
    const { link } = await runtime.services.get(BROWSERS).handoff({ runId: runtime.runId });
    return { link };
  } catch (error) {
    if (hasCode(error, 'browser_unavailable') || hasCode(error, 'browser_backend_unavailable'))
      return { refused: serializeError(error).message };
    throw error;
  }
}
