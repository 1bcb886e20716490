import { randomUUID } from 'node:crypto';
import {
  PROGRESS_SERVICE,
  TOOL_SEARCH_SERVICE,
  type ProgressService,
  type ToolSearchService,
} from '../../../tools/agent/agent-services.ts';
import { insertProgressNote, type ProgressLimits } from '../../store/progress-notes.ts';
import type { Db } from '../../store/db.ts';
import type { Redactor } from '../../tool/redaction.ts';
import type { MeshServiceFactory } from '../service-host.ts';

/** How often a run may post progress: enough to narrate a long task, never a flood. */
export const PROGRESS_LIMITS: ProgressLimits = Object.freeze({ perRun: 20, minIntervalMs: 5_000 });

/** Whether a link is one a person can open: an absolute http(s) URL. */
function linkProblem(link: string): string | undefined {
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return 'link is not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'link is not an http(s) URL';
  return undefined;
}

/**
 * The progress verb's poster over the database: the note (redacted of held secrets, like every
 * message the agent writes) becomes the agent's message in the run's conversation, once per call
 * and within the run's limits. What was refused is said without echoing the note.
 */
export function progressPoster(
  db: Db,
  redactor: Redactor | undefined,
  limits: ProgressLimits = PROGRESS_LIMITS,
): ProgressService {
  return {
    async post(ctx, note) {
      const problem = note.link === undefined ? undefined : linkProblem(note.link);
      if (problem) return { posted: false, why: problem };
      const clean = (s: string) => (redactor ? redactor.text(s) : s);
      const text = clean(note.text.trim());
      if (text === '') return { posted: false, why: 'the note is empty' };
      const link = note.link === undefined ? null : clean(note.link);
      const body = link === null ? text : `${text}\n${link}`;
      const outcome = await insertProgressNote(
        db,
        { messageId: randomUUID(), runId: ctx.runId, callId: ctx.callId, body, link },
        limits,
      );
      switch (outcome.kind) {
        case 'posted':
          return {
            posted: true,
            messageId: outcome.note.messageId,
            data: {
              message_id: outcome.note.messageId,
              text,
              ...(link === null ? {} : { link }),
              posted_at: outcome.note.createdAt.toISOString(),
            },
          };
        case 'no_conversation':
          return { posted: false, why: 'this task has no conversation to post to' };
        case 'too_many':
          return {
            posted: false,
            why: `this task already posted ${outcome.posted} notes, its limit; say the rest in your reply`,
          };
        case 'too_soon':
          return {
            posted: false,
            why: `a note was posted less than ${limits.minIntervalMs / 1000} s ago; post again later, in ${Math.ceil(outcome.waitMs / 1000)} s or more`,
          };
      }
    },
  };
}

/** The progress verb's poster, as the services seam builds it. */
export const progressService: MeshServiceFactory<ProgressService> = {
  key: PROGRESS_SERVICE,
  create: ({ db, redactor }) => progressPoster(db, redactor),
};

/**
 * tool_search outside a turn (an operator's call): there is no request to load tools into, so
 * it says where a search of the agent's tools is found instead.
 */
export const toolSearchService: MeshServiceFactory<ToolSearchService> = {
  key: TOOL_SEARCH_SERVICE,
  create: () => ({
    search: () =>
      Promise.resolve({
        text: 'tool_search loads tools into a running turn; outside one, search an agent’s tools with `mesh tools search AGENT QUERY` (or GET /api/agents/{agent}/tools/search).',
        isError: true,
      }),
  }),
};
