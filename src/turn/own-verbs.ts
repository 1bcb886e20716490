import type { ToolRuntime } from '../tool/context.ts';
import { BROWSERS } from '../tool/browser.ts';
import type { Definition } from '../tool/definition.ts';
import { hasCode, serializeError } from '../tool/errors.ts';
import { BROWSER_HANDOFF, offersHandoff } from './browser-handoff.ts';

/** The verb that closes a commitment: offered only while the agent has one open. */
export const FULFIL = 'fulfil';

/**
 * The memory verbs that read or change a memory the agent already has: offered only while it has
 * one (remember is always offered, and a memory it writes this turn is listed from the next).
 */
export const ON_MEMORIES: ReadonlySet<string> = new Set(['recall', 'amend', 'forget']);

/**
 * The turn's registry as offered: the agent's own verbs come from the catalog (tools/agent/) like
 * any tool, so policy has already gated them. browser_handoff is further kept only beside browser
 * tools the agent was granted (there is nothing to hand over without them), fulfil only while a
 * commitment is open, and recall, amend and forget only while a memory is (the instructions list
 * both). A verb that could only answer "there is none" costs every request its schema for nothing.
 */
export function withOwnVerbs(
  granted: readonly Definition[],
  state: { readonly openCommitments: number; readonly memories: number },
): Definition[] {
  const handoff = offersHandoff(granted);
  return granted.filter(
    (d) =>
      (d.tool.name !== BROWSER_HANDOFF || handoff) &&
      (d.tool.name !== FULFIL || state.openCommitments > 0) &&
      (!ON_MEMORIES.has(d.tool.name) || state.memories > 0),
  );
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
