import type { JsonObject } from '../../src/model/json.ts';
import { serviceKey, type ToolContext } from '../../src/tool/context.ts';
import type { ToolOutput } from '../../src/tool/definition.ts';

/**
 * tool_search as the runtime serves it. Inside a turn on the index, the turn's own: a search
 * loads its matches into the next request. Anywhere else (an operator's call), a search of the
 * agent's offered tools that loads nothing.
 */
export interface ToolSearchService {
  search(ctx: ToolContext, query: string): Promise<ToolOutput>;
}

export const TOOL_SEARCH_SERVICE = serviceKey<ToolSearchService>('mesh.agent.tool_search');

/** A progress note as the model gave it: the line, and a URL to look at. */
export interface ProgressNote {
  readonly text: string;
  readonly link?: string;
}

/** What posting a note came to: posted (with its message), or held back and why. */
export type ProgressPosted =
  | { readonly posted: true; readonly messageId: string; readonly data: JsonObject }
  | { readonly posted: false; readonly why: string };

/**
 * Posts progress notes to the run's conversation: persisted as a message of the agent and
 * streamed to whoever watches the conversation. Idempotent per call (a resumed run that runs the
 * verb again gets its first note back), and rate-limited per run.
 */
export interface ProgressService {
  post(ctx: ToolContext, note: ProgressNote): Promise<ProgressPosted>;
}

export const PROGRESS_SERVICE = serviceKey<ProgressService>('mesh.agent.progress');

/** A commitment as the verbs report it back. */
export interface Commitment {
  readonly id: string;
  readonly text: string;
  /** ISO 8601, or null when it has no due time. */
  readonly due: string | null;
  readonly state: 'open' | 'fulfilled';
  readonly note: string | null;
}

/**
 * The agent's commitments: what it promised to do later. Writes are idempotent per call (a
 * resumed run that runs a verb again gets its first write back); a commitment belongs to the
 * agent and to the conversation of the run that made it, never to what the model names.
 */
export interface CommitmentsService {
  commit(ctx: ToolContext, text: string, due: Date | null): Promise<Commitment>;
  /** Undefined when `id` is not an open commitment of this agent. */
  fulfil(ctx: ToolContext, id: string, note: string): Promise<Commitment | undefined>;
  open(ctx: ToolContext): Promise<readonly Commitment[]>;
}

export const COMMITMENTS_SERVICE = serviceKey<CommitmentsService>('mesh.agent.commitments');
