import type { Mesh } from '../../app/mesh.ts';
import { requireAgent } from '../../app/agents.ts';
import {
  getArtifact,
  getConversation,
  listConversations,
  listMessages,
  listRuns,
} from '../../app/queries.ts';
import { sendMessage, turnOutcome } from '../../app/turns.ts';
import { runEffects } from '../../app/outbound-view.ts';
import { conversationJson, messageJson, runJson, runSummaryJson } from '../../app/views.ts';
import { resolveRun } from '../../app/runs/run-ref.ts';
import { MeshError } from '../../tool/errors.ts';
import { artifactResponse } from '../artifact-response.ts';
import { isUuid, UUID_SOURCE } from '../ids.ts';
import { closedObject, JsonAnswer } from '../router.ts';
import {
  conversationEventStream,
  conversationResume,
  resumeAfter,
  runEventStream,
} from '../run-events.ts';
import { LIMIT, limitOf, route, type Route } from './context.ts';
import { MAX_WAIT_S, waitOf } from './wait.ts';

/** The run the path names, by its id or a unique prefix of 8 or more characters. */
function runOr404(mesh: Mesh, id: string) {
  return resolveRun(mesh, id, 'path.run');
}

/** The artifact the path names, in the run it names. */
async function artifactOr404(mesh: Mesh, params: Readonly<Record<string, string>>) {
  const run = await runOr404(mesh, params['run'] ?? '');
  const id = params['artifact'] ?? '';
  const artifact = isUuid(id) ? await getArtifact(mesh, id) : undefined;
  if (!artifact || artifact.runId !== run.id)
    throw new MeshError('artifact_not_found', 'no artifact with that id in this run');
  return artifact;
}

function isTextual(mediaType: string): boolean {
  return mediaType.startsWith('text/') || mediaType.startsWith('application/json');
}

/** Conversations and the runs their messages started. */
export const conversationRoutes: readonly Route[] = [
  route({
    method: 'GET',
    path: '/api/agents/{agent}/conversations',
    operationId: 'listConversations',
    summary: "An agent's conversations, most recent first",
    tag: 'conversations',
    query: LIMIT,
    handle: async ({ context, params, query }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      const rows = await listConversations(context.mesh, agent.id, limitOf(query));
      return { conversations: rows.map(conversationJson) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/agents/{agent}/messages',
    operationId: 'sendMessage',
    summary:
      'Send a message to an agent (a new conversation unless one is named): it is recorded with its run, queued, and answered 202 with where to follow the run',
    description: [
      "The message and its run are recorded before the answer; a worker in any `mesh serve` replica drives the turn (a queued run survives a restart). The answer is `202` with `{run_id, conversation_id, message_id, status, events, run}`: `events` is the run's event stream (`GET /api/runs/{run}/events`), which carries its steps and its `reply`, and `run` its record.",
      '',
      `To wait for the reply in the request instead, ask with \`?wait=SECONDS\` (0-${MAX_WAIT_S}) or \`Prefer: wait=N\` (cut to ${MAX_WAIT_S}; answered with \`Preference-Applied\`). A run that settles in time is answered \`200\` with its \`status\`, \`reason\` and \`reply\` added; one still going is answered \`202\` as above.`,
    ].join('\n'),
    tag: 'conversations',
    status: 202,
    query: {
      wait: {
        description: `Wait up to this many seconds (0-${MAX_WAIT_S}) for the run to settle, and answer 200 with its reply if it does.`,
        schema: { type: 'integer', minimum: 0, maximum: MAX_WAIT_S },
      },
    },
    body: closedObject(
      {
        body: { type: 'string', minLength: 1, maxLength: 100000 },
        conversation_id: { type: 'string', pattern: `^${UUID_SOURCE}$` },
        audience: { enum: ['direct', 'shared'] },
      },
      ['body'],
    ),
    handle: async ({ context, params, body, query }) => {
      const wait = waitOf(query, context.prefer);
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      const sent = await sendMessage(context.mesh, {
        agentId: agent.id,
        ...(body.conversation_id ? { conversationId: body.conversation_id } : {}),
        ...(body.audience ? { audience: body.audience } : {}),
        actor: context.actor,
        body: body.body,
      });
      const links = {
        events: `/api/runs/${sent.runId}/events`,
        run: `/api/runs/${sent.runId}`,
      };
      const headers = {
        location: links.run,
        ...(wait.from === 'prefer' ? { 'preference-applied': `wait=${wait.seconds}` } : {}),
      };
      const ids = {
        run_id: sent.runId,
        conversation_id: sent.conversationId,
        message_id: sent.messageId,
      };
      // Unless asked to wait, the answer is the queued run: nothing more is read.
      if (wait.from === 'none')
        return new JsonAnswer(202, { ...ids, status: 'queued', ...links }, headers);
      const run = await context.mesh.runs.settled(sent.runId, wait.seconds * 1000);
      const outcome = run && (await turnOutcome(context.mesh, run));
      if (!outcome)
        return new JsonAnswer(202, { ...ids, status: run?.status ?? 'queued', ...links }, headers);
      return new JsonAnswer(
        200,
        {
          ...ids,
          status: outcome.status,
          reason: outcome.reason,
          reply: outcome.reply,
          ...links,
        },
        headers,
      );
    },
  }),
  route({
    method: 'GET',
    path: '/api/conversations/{conversation}/messages',
    operationId: 'listMessages',
    summary: "A conversation's messages, oldest first",
    tag: 'conversations',
    handle: async ({ context, params }) => {
      const id = params['conversation'] ?? '';
      const conversation = isUuid(id) ? await getConversation(context.mesh, id) : undefined;
      if (!conversation)
        throw new MeshError('conversation_not_found', 'no conversation with that id');
      return {
        conversation: conversationJson(conversation),
        messages: (await listMessages(context.mesh, conversation.id)).map(messageJson),
      };
    },
  }),
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
    path: '/api/agents/{agent}/runs',
    operationId: 'listRuns',
    summary: "An agent's runs, newest first",
    tag: 'runs',
    query: LIMIT,
    handle: async ({ context, params, query }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      const runs = await listRuns(context.mesh, { agentId: agent.id, limit: limitOf(query) });
      return { runs: runs.map(runSummaryJson) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/runs/{run}',
    operationId: 'getRun',
    summary:
      'A run and every step: model requests (offered and withheld tools, token estimate), tool calls with commit stamps, observations, the reply; and its effects with their delivery states',
    tag: 'runs',
    handle: async ({ context, params }) => {
      const run = await runOr404(context.mesh, params['run'] ?? '');
      const [steps, effects] = await Promise.all([
        context.mesh.ledger.steps(run.id),
        runEffects(context.mesh, run.id),
      ]);
      return runJson(run, steps, effects);
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
    path: '/api/runs/{run}/artifacts/{artifact}',
    operationId: 'getArtifact',
    summary: 'An observation stored whole as an artifact (its step shows the head and tail)',
    tag: 'runs',
    handle: async ({ context, params }) => {
      const artifact = await artifactOr404(context.mesh, params);
      const textual = isTextual(artifact.mediaType);
      return {
        id: artifact.id,
        run_id: artifact.runId,
        step_seq: artifact.stepSeq,
        media_type: artifact.mediaType,
        size_bytes: Number(artifact.sizeBytes),
        sha256: artifact.sha256,
        // Bytes that are not text would not survive UTF-8: they come as base64 (or from /content).
        content: textual ? Buffer.from(artifact.content).toString('utf8') : null,
        content_base64: textual ? null : Buffer.from(artifact.content).toString('base64'),
      };
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
      artifactResponse(await artifactOr404(context.mesh, params)),
  }),
];
