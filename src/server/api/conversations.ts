import type { Mesh } from '../../app/mesh.ts';
import { requireAgent } from '../../app/agents.ts';
import {
  getArtifact,
  getConversation,
  listConversations,
  listMessages,
  listRuns,
} from '../../app/queries.ts';
import { chat } from '../../app/turns.ts';
import { conversationJson, messageJson, runJson, runSummaryJson } from '../../app/views.ts';
import { MeshError } from '../../tool/errors.ts';
import { isUuid, UUID_SOURCE } from '../ids.ts';
import { closedObject } from '../router.ts';
import { actorOf, LIMIT, limitOf, route, type Route } from './context.ts';

async function runOr404(mesh: Mesh, id: string) {
  const run = isUuid(id) ? await mesh.ledger.run(id) : undefined;
  if (!run) throw new MeshError('run_not_found', 'no run with that id');
  return run;
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
      'Send a message to an agent (a new conversation unless one is named) and run its turn; answers with the run and the reply',
    tag: 'conversations',
    body: closedObject(
      {
        body: { type: 'string', minLength: 1, maxLength: 100000 },
        conversation_id: { type: 'string', pattern: `^${UUID_SOURCE}$` },
        audience: { enum: ['direct', 'shared'] },
      },
      ['body'],
    ),
    handle: async ({ context, params, body }) => {
      const agent = await requireAgent(context.mesh, params['agent'] ?? '');
      const result = await chat(context.mesh, {
        agentId: agent.id,
        ...(body.conversation_id ? { conversationId: body.conversation_id } : {}),
        ...(body.audience ? { audience: body.audience } : {}),
        actor: actorOf(context.operator),
        body: body.body,
      });
      return {
        run_id: result.runId,
        conversation_id: result.conversationId,
        status: result.status,
        reason: result.reason,
        reply: result.reply,
      };
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
      'A run and every step: model requests (offered and withheld tools, token estimate), tool calls with commit stamps, observations, the reply',
    tag: 'runs',
    handle: async ({ context, params }) => {
      const run = await runOr404(context.mesh, params['run'] ?? '');
      return runJson(run, await context.mesh.ledger.steps(run.id));
    },
  }),
  route({
    method: 'GET',
    path: '/api/runs/{run}/artifacts/{artifact}',
    operationId: 'getArtifact',
    summary: 'An observation stored whole as an artifact (its step shows the head and tail)',
    tag: 'runs',
    handle: async ({ context, params }) => {
      const run = await runOr404(context.mesh, params['run'] ?? '');
      const id = params['artifact'] ?? '';
      const artifact = isUuid(id) ? await getArtifact(context.mesh, id) : undefined;
      if (!artifact || artifact.runId !== run.id)
        throw new MeshError('artifact_not_found', 'no artifact with that id in this run');
      return {
        id: artifact.id,
        run_id: artifact.runId,
        step_seq: artifact.stepSeq,
        media_type: artifact.mediaType,
        size_bytes: artifact.sizeBytes,
        sha256: artifact.sha256,
        content: Buffer.from(artifact.content).toString('utf8'),
      };
    },
  }),
];
