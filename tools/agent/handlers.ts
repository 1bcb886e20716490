import type { JsonObject } from '../../src/model/json.ts';
import type { ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';
import { InvalidToolInputError } from '../../src/tool/errors.ts';
import {
  COMMITMENTS_SERVICE,
  PROGRESS_SERVICE,
  TOOL_SEARCH_SERVICE,
  type Commitment,
} from './agent-services.ts';

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

/** The furthest ahead a commitment may fall due. */
const MAX_DUE_MS = 366 * 24 * 60 * 60_000;

/** `due` as a time: an ISO 8601 date-time with its offset, in the future, within a year. */
function dueOf(raw: unknown, now: number): Date | null {
  if (raw === undefined) return null;
  const text = typeof raw === 'string' ? raw.trim() : '';
  const at = /^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(text)
    ? Date.parse(text)
    : Number.NaN;
  if (Number.isNaN(at))
    throw new InvalidToolInputError(
      'field `due` must be an ISO 8601 date-time with its offset, like 2026-12-08T09:00:00Z',
    );
  if (at <= now) throw new InvalidToolInputError('field `due` must be in the future');
  if (at - now > MAX_DUE_MS)
    throw new InvalidToolInputError('field `due` must be within a year from now');
  return new Date(at);
}

function line(c: Commitment): string {
  return `- [${c.id}] ${c.text}${c.due ? ` (due ${c.due})` : ''}`;
}

function commitmentJson(c: Commitment): JsonObject {
  return { id: c.id, text: c.text, due: c.due, state: c.state, note: c.note };
}

/** Records something the agent promised to do later; one with a due time is reminded then. */
export async function commit(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const text = (args['text'] as string).trim();
  if (text === '') throw new InvalidToolInputError('field `text` must say what you will do');
  const service = ctx.services.get(COMMITMENTS_SERVICE);
  const made = await service.commit(ctx, text, dueOf(args['due'], Date.now()));
  const open = await service.open(ctx);
  return {
    text: [
      `Committed as ${made.id}${made.due ? `; you will be reminded in this conversation at ${made.due}` : ''}. Fulfil it with its id and a note when it is done.`,
      `Your open commitments:`,
      ...open.map(line),
    ].join('\n'),
    data: { commitment: commitmentJson(made), open: open.map(commitmentJson) },
  };
}

/** Closes one of the agent's open commitments, with a note on what was done. */
export async function fulfil(ctx: ToolContext, args: JsonObject): Promise<ToolOutput> {
  const service = ctx.services.get(COMMITMENTS_SERVICE);
  const done = await service.fulfil(ctx, args['id'] as string, (args['note'] as string).trim());
  if (!done)
    throw new InvalidToolInputError(
      'field `id` does not name an open commitment of yours; your open ones are in your instructions',
    );
  return {
    text: `Fulfilled ${done.id}: ${done.text}`,
    data: { fulfilled: commitmentJson(done) },
  };
}
