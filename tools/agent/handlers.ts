import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { PROGRESS_SERVICE, TOOL_SEARCH_SERVICE } from './agent-services.ts';

// The arguments were decoded against the manifest's schema before a handler runs, so the fields
// below are present and of the declared kinds.

/** Finds more operations for the agent; in a turn on the index, loads them (see the service). */
export async function toolSearch(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  return ctx.services.get(TOOL_SEARCH_SERVICE).search(ctx, args['query'] as string);
}

/** A parking verb is carried out by the engine: called on its own, it says so. */
function answeredInConversation(name: string): ToolOutput {
  return {
    text: `${name} is answered in a conversation; it cannot be run on its own`,
    isError: true,
  };
}

/** Parks the run on a question to its conversation (the engine does; see `parks`). */
export async function requestInput(): Promise<ToolOutput> {
  return answeredInConversation('request_input');
}

/** Parks the run until a person hands the browser back (the engine does; see `parks`). */
export async function browserHandoff(): Promise<ToolOutput> {
  return answeredInConversation('browser_handoff');
}

/** Posts a progress note to the conversation while the run goes on. */
export async function progress(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const link = typeof args['link'] === 'string' ? args['link'] : undefined;
  const posted = await ctx.services
    .get(PROGRESS_SERVICE)
    .post(ctx, { text: args['text'] as string, ...(link === undefined ? {} : { link }) });
  if (!posted.posted) return { text: `Not posted: ${posted.why}`, isError: true };
  return { text: 'Posted.', data: posted.data };
}
