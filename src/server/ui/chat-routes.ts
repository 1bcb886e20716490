import { mappedRemoteNames } from '../../app/mcp/catalog.ts';
import { requireAgent } from '../../app/agents/agents.ts';
import {
  conversationQuestions,
  getConversation,
  listConversations,
  listMessages,
  progressNotesIn,
} from '../../app/conversations/reads.ts';
import { getAgent, listAgents } from '../../app/agents/reads.ts';
import {
  runQuestions,
  runBrowserSessions,
  getArtifact,
  listConversationRuns,
  listRuns,
} from '../../app/runs/reads.ts';
import { sendMessageOperation } from '../../app/conversations/operations.ts';
import { invokeOperation } from '../../app/operations/operation.ts';
import { listRunsOperation } from '../../app/runs/operations.ts';
import { answerRunOperation } from '../../app/runs/answer-operation.ts';
import { usageOperation } from '../../app/runs/usage-operation.ts';
import { usagePage } from './usage-page.ts';
import { memoriesPage } from './memory-page.ts';
import { outboundPage } from './outbound-page.ts';
import { listOutboundOperation } from '../../app/runs/outbound-operation.ts';
import { agentMemoriesOperation } from '../../app/agents/memory-operation.ts';
import { resolveRun } from '../../app/runs/run-ref.ts';
import { allRunsPage } from './all-runs-page.ts';
import { MeshError } from '../../tool/errors.ts';
import { artifactResponse } from '../artifact-response.ts';
import { isUuid } from '../ids.ts';
import { runEffects } from '../../app/runs/outbound-view.ts';
import { resumeAfter, runEventStream } from '../run-events.ts';
import { chatPage } from './chat-page.ts';
import { effectRow, runPage, runsPage, stepItem } from './run-pages.ts';
import { agentPath, field, param, post, type UiRoute } from './ui-route.ts';

/** The Chat and Runs tabs, and a run's page. */
export const chatRoutes: readonly UiRoute[] = [
  {
    method: 'GET',
    path: '/agents/{agent}/chat',
    handle: async ({ mesh, session, params, query }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      const id = query.get('conversation');
      let current;
      if (id !== null) {
        const conversation = isUuid(id) ? await getConversation(mesh, id) : undefined;
        if (!conversation || conversation.agentId !== agent.id)
          throw new MeshError(
            'conversation_not_found',
            'no conversation with that id for this agent',
          );
        const [messages, runs, questions, progress] = await Promise.all([
          listMessages(mesh, conversation.id),
          listConversationRuns(mesh, conversation.id),
          conversationQuestions(mesh, conversation.id),
          progressNotesIn(mesh, conversation.id),
        ]);
        current = { conversation, messages, runs, questions, progress };
      }
      return {
        page: chatPage(session, agent, await listConversations(mesh, agent.id), current),
      };
    },
  },
  post(
    '/agents/{agent}/chat',
    (call) => {
      const conversation = field(call.form, 'conversation');
      return `${agentPath(call.params['agent'] ?? '', 'chat')}${conversation ? `?conversation=${encodeURIComponent(conversation)}` : ''}`;
    },
    sendMessageOperation,
    ({ params, form }) => {
      const conversation = field(form, 'conversation');
      const audience = field(form, 'audience');
      // Recorded with its run and queued; the chat page shows it at once and follows the run.
      return {
        agent: params['agent'] ?? '',
        ...(conversation ? { conversation_id: conversation } : {}),
        ...(audience === 'shared' || audience === 'direct' ? { audience } : {}),
        body: field(form, 'body'),
      };
    },
    (sent, call) => ({
      text: 'Sent.',
      to: `${agentPath(param(call, 'agent'), 'chat')}?conversation=${sent.conversation_id}`,
    }),
  ),
  post(
    '/runs/{run}/answer',
    (call) =>
      localPath(field(call.form, 'back')) ??
      `/runs/${encodeURIComponent(call.params['run'] ?? '')}`,
    answerRunOperation,
    ({ params, form }) => ({
      run: params['run'] ?? '',
      // A choice's button, or the answer in the person's own words; a hand-back says what the
      // person did, or that they handed the browser back.
      body:
        field(form, 'choice') ||
        field(form, 'body') ||
        (field(form, 'handback') === '1' ? 'Handed back.' : ''),
    }),
    (_, { form }) => ({
      text:
        field(form, 'handback') === '1'
          ? 'Handed back: the run goes on.'
          : 'Answered: the run goes on.',
    }),
  ),
  {
    method: 'GET',
    path: '/agents/{agent}/runs',
    handle: async ({ mesh, session, params }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      return {
        page: runsPage(session, agent, await listRuns(mesh, { agentId: agent.id, limit: 100 })),
      };
    },
  },
  {
    method: 'GET',
    path: '/agents/{agent}/memories',
    handle: async ({ mesh, session, params }) => {
      const agent = await requireAgent(mesh, params['agent'] ?? '');
      const { memories } = await invokeOperation(
        mesh,
        agentMemoriesOperation,
        { agent: agent.name },
        session,
      );
      return { page: memoriesPage(session, agent, memories) };
    },
  },
  {
    method: 'GET',
    path: '/outbound',
    handle: async ({ mesh, session, query }) => {
      const state = query.get('state') ?? '';
      const filter = {
        ...(query.get('agent') ? { agent: query.get('agent') ?? '' } : {}),
        ...(state ? { state } : {}),
      };
      const [listing, agents] = await Promise.all([
        invokeOperation(mesh, listOutboundOperation, { ...filter, limit: 200 }, session),
        listAgents(mesh),
      ]);
      return {
        page: outboundPage(
          session,
          listing,
          agents.map((a) => a.name),
          filter,
        ),
      };
    },
  },
  {
    method: 'GET',
    path: '/usage',
    handle: async ({ mesh, session, query }) => {
      const days = Number(query.get('days') ?? '14');
      const usage = await invokeOperation(
        mesh,
        usageOperation,
        Number.isSafeInteger(days) && days >= 1 && days <= 90 ? { days } : {},
        session,
      );
      return { page: usagePage(session, usage) };
    },
  },
  {
    method: 'GET',
    path: '/runs',
    handle: async ({ mesh, session, query }) => {
      const filter = {
        ...(query.get('agent') ? { agent: query.get('agent') ?? '' } : {}),
        ...(query.get('status') ? { status: query.get('status') ?? '' } : {}),
        ...(query.get('hours') ? { hours: query.get('hours') ?? '' } : {}),
      };
      const { hours, ...rest } = filter;
      const [listing, agents] = await Promise.all([
        invokeOperation(
          mesh,
          listRunsOperation,
          { ...rest, ...(hours ? { hours: Number(hours) } : {}), limit: 200 },
          session,
        ),
        listAgents(mesh),
      ]);
      return {
        page: allRunsPage(
          session,
          listing,
          agents.map((a) => a.name),
          filter,
        ),
      };
    },
  },
  {
    method: 'GET',
    path: '/runs/{run}',
    handle: async ({ mesh, session, params }) => {
      const run = await resolveRun(mesh, params['run'] ?? '', 'path.run');
      const [agent, steps, mapped, effects, questions, sessions] = await Promise.all([
        getAgent(mesh, run.agentId),
        mesh.ledger.steps(run.id),
        mappedRemoteNames(mesh, run.agentId),
        runEffects(mesh, run.id),
        runQuestions(mesh, run.id),
        runBrowserSessions(mesh, run.id),
      ]);
      return {
        page: runPage(session, agent, run, steps, mapped, effects, questions, sessions),
      };
    },
  },
  {
    // What one model request sent, exactly (its prompt snapshot), by its step.
    method: 'GET',
    path: '/runs/{run}/steps/{seq}/prompt',
    handle: async ({ mesh, session, params }) => {
      const run = await resolveRun(mesh, params['run'] ?? '', 'path.run');
      const steps = await mesh.ledger.steps(run.id);
      const seq = Number(params['seq']);
      const requests = steps.filter((s) => s.kind === 'model_request');
      const n = requests.findIndex((s) => s.seq === seq) + 1;
      const [{ promptOf }, { promptPage }] = await Promise.all([
        import('../../app/runs/prompt-view.ts'),
        import('./prompt-page.ts'),
      ]);
      if (n === 0)
        throw new MeshError(
          'request_not_found',
          `step ${params['seq'] ?? '?'} of run ${run.id} is not a model request`,
        );
      return { page: promptPage(session, run.id, await promptOf(mesh, run.id, steps, n)) };
    },
  },
  {
    // The run's live events for the pages: the API's stream, authorized by the session cookie
    // (a browser's EventSource cannot send a bearer token), each step with its page markup.
    method: 'GET',
    path: '/runs/{run}/events',
    handle: async ({ mesh, params, query, streams, lastEventId, session }) => {
      const run = await resolveRun(mesh, params['run'] ?? '', 'path.run');
      const after = resumeAfter(query, lastEventId);
      const mapped = await mappedRemoteNames(mesh, run.agentId);
      return {
        response: runEventStream(mesh, run, {
          slots: streams,
          holder: session.tokenId,
          after,
          render: (step) => stepItem(step, mapped).text,
          renderEffect: (effect) => effectRow(effect).text,
        }),
      };
    },
  },
  {
    method: 'GET',
    path: '/runs/{run}/artifacts/{artifact}',
    handle: async ({ mesh, params }) => {
      const runId = params['run'] ?? '';
      const id = params['artifact'] ?? '';
      const artifact = isUuid(runId) && isUuid(id) ? await getArtifact(mesh, id) : undefined;
      if (!artifact || artifact.runId !== runId)
        throw new MeshError('artifact_not_found', 'no artifact with that id in this run');
      return { response: artifactResponse(artifact) };
    },
  },
];

/** `path` when it is a path on this server (never another origin), to redirect back to. */
function localPath(path: string): string | undefined {
  return /^\/(?![/\\])[\x21-\x7e]*$/.test(path) ? path : undefined;
}
