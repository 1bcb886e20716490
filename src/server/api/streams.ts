import type { Mesh } from '../../app/mesh.ts';
import { getConversation } from '../../app/conversations/reads.ts';
import { runArtifact } from '../../app/runs/artifacts.ts';
import { resolveRun } from '../../app/runs/run-ref.ts';
import { MeshError } from '../../tool/errors.ts';
import { artifactResponse } from '../artifact-response.ts';
import { isUuid, UUID_SOURCE } from '../ids.ts';
import {
  conversationEventStream,
  conversationResume,
  resumeAfter,
  runEventStream,
} from '../run-events.ts';
import { route, type Route } from './context.ts';

/*
 * The API's routes that are not operations of the catalog, because they answer no JSON: the live
 * event streams (server-sent events, held open) and an artifact's bytes. Every other route is
 * generated from the catalog (./operations.ts).
 */

/** The run the path names, by its id or a unique prefix of 8 or more characters. */
function runOr404(mesh: Mesh, id: string) {
  return resolveRun(mesh, id, 'path.run');
}

/** The streams and bytes the API serves beside the catalog's operations. */
export const streamRoutes: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/conversations/{conversation}/events',
    operationId: 'streamConversationEvents',
    summary:
      "A conversation's live events as server-sent events: each run's state and replies, in the order the runs were created",
    description: [
      'A `text/event-stream` read from the database. For each run of the conversation, oldest first:',
      '',
      '- `state`: `{run_id, status, reason, usage, committed_at, finished_at, final}` when the run is first seen and on every change, `final: true` once it is neither queued nor running;',
      '- `reply` (`id: <run id>:<seq>`): `{run_id, seq, message_id, body}`;',
      '- `delta`: `{run_id, round, attempt, text, reset}` while the model writes a reply: `text` is appended to what this stream sent for the run, or replaces it when `reset` (a new round or retried attempt). A draft only: the `reply` is the record;',
      '- `error`: the server could not read the conversation; reconnect.',
      '',
      'New runs (the next messages) join the stream as they are created; it lasts until the client leaves or ten minutes pass. Resume with `Last-Event-ID: <run id>:<seq>` or `?after=<run id>:<seq>`: runs before that run and its steps up to that seq are skipped (an id naming no run of the conversation replays it from the start). Bounded per server with the run streams (429 past it).',
    ].join('\n'),
    tag: 'conversations',
    query: {
      after: {
        description:
          'Resume after this event id (`<run id>:<seq>`); Last-Event-ID wins when both are given.',
        schema: { type: 'string', pattern: `^${UUID_SOURCE}:[0-9]{1,9}$` },
      },
    },
    mediaType: 'text/event-stream',
    response: { type: 'string', contentMediaType: 'text/event-stream' },
    handle: async ({ context, params, query }) => {
      const id = params['conversation'] ?? '';
      const conversation = isUuid(id) ? await getConversation(context.mesh, id) : undefined;
      if (!conversation)
        throw new MeshError('conversation_not_found', 'no conversation with that id');
      const resume = conversationResume(query, context.lastEventId);
      return conversationEventStream(context.mesh, conversation.id, {
        slots: context.streams,
        holder: context.operator.id,
        resume,
      });
    },
  }),
  route({
    method: 'GET',
    path: '/api/runs/{run}/events',
    operationId: 'streamRunEvents',
    summary:
      "A run's live events as server-sent events: its steps, progress, state changes and reply, until the run stops",
    description: [
      'A `text/event-stream` read from the database (any replica serves any run). Events:',
      '',
      '- `step` (`id: <seq>`): a step as `GET /api/runs/{run}` shows it, every step after the resume point, in order;',
      '- `reply` (`id: <seq>` of its reply step): `{run_id, seq, message_id, body}`;',
      '- `progress`: `{run_id, usage}` when the run records new usage;',
      "- `browser`: `{run_id, id, state, live_view_url, recording_artifact_id, …}`, one of the run's browser sessions when first seen and whenever it changes: where a person watches it live while it runs, its recording once released;",
      "- `effect`: `{run_id, ...}`, one of the run's outbound events as `GET /api/runs/{run}` lists it, when the stream first sees it and whenever its delivery changes (state, attempts) while the stream is open;",
      '- `delta`: `{run_id, round, attempt, text, reset}`, the text the model is writing in the current round (the provider streams it): append `text`, or replace with it when `reset` (the first sent, a new round, a retried attempt). A draft, never a record: the `model_response` step and the `reply` are, and a round with its response sends no more deltas;',
      '- `state`: `{run_id, status, reason, usage, committed_at, finished_at, final}` first, on every status change, and last with `final: true` once the run is neither queued nor running; the stream then ends;',
      '- `error`: the server could not read the run; reconnect.',
      '',
      'Resume with `Last-Event-ID: <seq>` (an EventSource sends it on reconnect) or `?after=<seq>`: only later steps are sent. Comments keep an idle stream open; a stream lasts at most ten minutes, then the client resumes. Each server holds a bounded number of streams (429 past it).',
    ].join('\n'),
    tag: 'runs',
    query: {
      after: {
        description: 'Send only steps after this seq (Last-Event-ID wins when both are given).',
        schema: { type: 'integer', minimum: 0, maximum: 999999999 },
      },
    },
    mediaType: 'text/event-stream',
    response: { type: 'string', contentMediaType: 'text/event-stream' },
    handle: async ({ context, params, query }) => {
      const run = await runOr404(context.mesh, params['run'] ?? '');
      const after = resumeAfter(query, context.lastEventId);
      return runEventStream(context.mesh, run, {
        slots: context.streams,
        holder: context.operator.id,
        after,
      });
    },
  }),
  route({
    method: 'GET',
    path: '/api/runs/{run}/artifacts/{artifact}/content',
    operationId: 'getArtifactContent',
    summary:
      "An artifact's bytes: images, sound and text as their own type, anything else as an application/octet-stream download; always nosniff",
    tag: 'runs',
    mediaType: 'application/octet-stream',
    response: { type: 'string', contentMediaType: 'application/octet-stream' },
    handle: async ({ context, params }) =>
      artifactResponse(
        await runArtifact(context.mesh, params['run'] ?? '', params['artifact'] ?? '', 'path.run'),
      ),
  }),
];
