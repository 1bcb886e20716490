import { randomUUID } from 'node:crypto';
import type { ModelClient } from '../../model/client.ts';
import { ModelCallError } from '../../providers/errors.ts';
import type { AttemptListener } from '../../providers/openai-compatible.ts';
import { parseScript, scriptedClient } from '../../providers/scripted.ts';
import { budgetFrom, type Budget } from '../../run/budget.ts';
import { driveHeldRun } from '../../run/held-run.ts';
import { isSettled } from '../../run/run-queue.ts';
import { Worker } from '../../run/worker.ts';
import { RUN_LEASE_MS } from '../../run/lease-heartbeat.ts';
import type { AgentRecord, RunRecord, StepRecord } from '../../run/records.ts';
import { getAgent } from '../../store/agents.ts';
import { grantedQueryProviders } from '../../store/query-providers.ts';
import { getConversation, getMessage, listMessagesBefore } from '../../store/conversations.ts';
import { recentActiveMemories } from '../../store/memories.ts';
import { openCommitments } from '../../store/commitments.ts';
import { commitmentOf } from '../agents/commitments.ts';
import { getModelProvider, type ModelProviderRecord } from '../../store/model-providers.ts';
import { MeshError } from '../../tool/errors.ts';
import { turnDriver, type TurnEnvironment, type TurnModel } from '../../turn/engine.ts';
import { receiveMessage, type InboundMessage } from '../../turn/intake.ts';
import type { Mesh } from '../mesh.ts';
import { workerMetrics } from '../metrics.ts';
import { operatorCallDriver, runtimeFor } from '../runs/operator-call.ts';
import { turnPolicy } from '../packages/policy.ts';

/** Builds a model client for a provider row; the composition root supplies the key lookup. */
export type ModelClientFactory = (
  provider: ModelProviderRecord,
  onAttempt?: AttemptListener,
) => ModelClient;

/**
 * Model attempts one run may make beyond one per round of its budget: retries are shared across
 * the run, so a storm of 5xx ends it instead of retrying every round to the limit.
 */
export const MODEL_RETRIES_PER_RUN = 5;

/** The turn engine's environment over a Mesh. */
export function turnEnvironment(
  mesh: Mesh,
  clientFor: ModelClientFactory = defaultClientFor(mesh),
): TurnEnvironment {
  return {
    packages: mesh.catalog.packages,
    async loadTurn(run: RunRecord) {
      // The run names everything the turn reads, so the reads are issued together (Mesh.reads).
      const { db } = mesh.reads;
      const { conversationId, inboundMessageId } = run;
      const [agent, conversation, inbound, history, recent, open] = await Promise.all([
        getAgent(db, run.agentId),
        conversationId ? getConversation(db, conversationId) : undefined,
        inboundMessageId ? getMessage(db, inboundMessageId) : undefined,
        conversationId && inboundMessageId
          ? listMessagesBefore(db, conversationId, inboundMessageId)
          : [],
        recentActiveMemories(db, run.agentId, 20),
        openCommitments(db, run.agentId, 20),
      ]);
      if (!agent || !conversation || !inbound) {
        throw new MeshError(
          'turn_incomplete',
          `run ${run.id} has no agent, conversation or inbound message`,
        );
      }
      const memories = recent.map((m) => ({ id: m.id, content: m.content }));
      const commitments = open.map(commitmentOf);
      return { agent, conversation, inbound, history, memories, commitments };
    },
    policyFor: (_run, agent, conversation) =>
      turnPolicy(mesh, agent.id, conversation.audience, conversation.id),
    runtimeFor: (run, signal, configFor) => runtimeFor(mesh, run, signal, configFor),
    async modelFor(agent: AgentRecord, run: RunRecord): Promise<TurnModel> {
      if (!agent.modelProviderId || !agent.model) {
        throw new MeshError(
          'agent_has_no_model',
          `agent ${agent.name} has no model provider; set one with mesh agents create --provider`,
        );
      }
      const provider = await getModelProvider(mesh.reads.db, agent.modelProviderId);
      if (!provider)
        throw new MeshError(
          'provider_not_found',
          `agent ${agent.name}'s model provider no longer exists`,
        );
      // One attempt per round the run may still take, and the run's retries besides.
      const allowed = budgetFrom(run.budget).maxRounds + MODEL_RETRIES_PER_RUN;
      let attempts = 0;
      const cap: AttemptListener = () => {
        attempts++;
        if (attempts > allowed) {
          throw new ModelCallError(
            {
              code: 'server_error',
              message: `the run's ${allowed} model attempts are spent (one per round and ${MODEL_RETRIES_PER_RUN} retries)`,
              retryable: false,
            },
            0,
          );
        }
      };
      return {
        client: clientFor(provider, cap),
        model: agent.model,
        imageInput: agent.modelImageInput,
        budget: {
          contextTokens: provider.contextTokens,
          reservedOutputTokens: provider.maxOutputTokens,
        },
      };
    },
  };
}

/** Scripted providers only; the OpenAI-compatible client is wired where secrets are available. */
function defaultClientFor(mesh: Mesh): ModelClientFactory {
  return (provider, onAttempt) => {
    if (provider.kind === 'scripted') return scriptedClient(parseScript(provider.script));
    return mesh.modelClientFor(provider, onAttempt);
  };
}

/** The worker that drives this Mesh's queued runs, and resumes what a crash left: turns and operator calls. */
export function meshWorker(mesh: Mesh, log: (line: string) => void): Worker {
  return new Worker({
    ledger: mesh.ledger,
    drivers: [turnDriver(turnEnvironment(mesh)), operatorCallDriver(mesh)],
    // Every turn is driven by a worker now: MESH_TURN_CONCURRENCY bounds them per process.
    concurrency: mesh.turnSlots.limit,
    log,
    observer: workerMetrics(),
  });
}

/** A message as it arrives for an agent (its run's budget and lease are this module's to set). */
export type MessageInput = Omit<InboundMessage, 'budget' | 'lease'>;

/**
 * The budget a new run of the agent copies: its profile as it is now (defaults where it sets
 * nothing) and its query providers' call ceilings. Nothing changes a run's budget after this.
 */
async function budgetFor(mesh: Mesh, agentId: string): Promise<Budget> {
  const [agent, providers] = await Promise.all([
    getAgent(mesh.db, agentId),
    grantedQueryProviders(mesh.db, agentId),
  ]);
  // Each granted query provider's call ceiling as it is now: `mesh web set` reaches later runs.
  const providerCalls = Object.fromEntries(providers.map((p) => [p.name, p.maxCallsPerRun]));
  return { ...budgetFrom(agent?.budget ?? {}), providerCalls };
}

/** A recorded message and the run that answers it, queued. */
export interface SentMessage {
  readonly runId: string;
  readonly conversationId: string;
  readonly messageId: string;
}

/**
 * Tells this process's worker a run was queued; a process with no worker yet starts one, so a
 * queued run never waits for a process that is not coming.
 */
export function runQueued(mesh: Mesh): void {
  if (mesh.runs.worker) mesh.runs.queued();
  else mesh.runs.attach(meshWorker(mesh, () => undefined));
}

/**
 * Records a message with its run, queued, and returns at once: a worker (this process's, or any
 * replica's) drives the turn. A process with no worker yet starts one, so a queued run never
 * waits for a process that is not coming.
 */
export async function sendMessage(mesh: Mesh, input: MessageInput): Promise<SentMessage> {
  const { conversation, message, run } = await receiveMessage(mesh.ledger, {
    ...input,
    budget: await budgetFor(mesh, input.agentId),
  });
  runQueued(mesh);
  return { runId: run.id, conversationId: conversation.id, messageId: message.id };
}

/** What a turn came to. */
export interface ChatResult {
  readonly runId: string;
  readonly conversationId: string;
  readonly status: string;
  readonly reason: string | null;
  readonly reply: string | null;
  readonly steps: readonly StepRecord[];
}

/** A settled run's outcome with its reply; undefined while it has not settled. */
export async function turnOutcome(mesh: Mesh, run: RunRecord): Promise<ChatResult | undefined> {
  if (!isSettled(run)) return undefined;
  return outcomeOf(mesh, { ...run, conversationId: run.conversationId ?? '' });
}

async function outcomeOf(
  mesh: Mesh,
  run: Pick<ChatResult, 'conversationId' | 'status' | 'reason'> & { readonly id: string },
): Promise<ChatResult> {
  const steps = await mesh.ledger.steps(run.id);
  const reply = steps.find((s) => s.kind === 'reply');
  const body = reply?.kind === 'reply' ? reply.data.body : undefined;
  return {
    runId: run.id,
    conversationId: run.conversationId,
    status: run.status,
    reason: run.reason,
    reply: typeof body === 'string' ? body : null,
    steps,
  };
}

/**
 * Sends a message and waits for its turn to settle. With a worker in this process (a serving
 * Mesh) the turn is queued for the workers like any other; a process without one (a CLI command
 * on its own home) drives it here, under a lease: the same run a worker would drive, resumable by
 * one if this process dies.
 */
export async function chat(mesh: Mesh, input: MessageInput): Promise<ChatResult> {
  if (mesh.runs.worker) {
    const sent = await sendMessage(mesh, input);
    const run = await mesh.runs.settled(sent.runId, Number.POSITIVE_INFINITY);
    const outcome = run && (await turnOutcome(mesh, run));
    if (!outcome) throw new MeshError('run_not_found', `run ${sent.runId} is gone`);
    return outcome;
  }
  return mesh.turnSlots.run(() => chatNow(mesh, input));
}

async function chatNow(mesh: Mesh, input: MessageInput): Promise<ChatResult> {
  const owner = `chat:${process.pid}:${randomUUID().slice(0, 8)}`;
  const { conversation, run } = await receiveMessage(mesh.ledger, {
    ...input,
    budget: await budgetFor(mesh, input.agentId),
    lease: { owner, leaseMs: RUN_LEASE_MS },
  });
  const lease = { runId: run.id, owner, epoch: run.leaseEpoch };
  const end = await driveHeldRun(mesh.ledger, turnDriver(turnEnvironment(mesh)), run, lease);
  return outcomeOf(mesh, {
    id: run.id,
    conversationId: conversation.id,
    status: end.status,
    reason: end.reason,
  });
}
