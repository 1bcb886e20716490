import { randomUUID } from 'node:crypto';
import type { ModelClient } from '../model/client.ts';
import { ModelCallError } from '../providers/errors.ts';
import type { AttemptListener } from '../providers/openai-compatible.ts';
import { parseScript, scriptedClient } from '../providers/scripted.ts';
import type { Audience } from '../policy/audience.ts';
import { driveHeldRun } from '../run/held-run.ts';
import { RUN_LEASE_MS } from '../run/lease-heartbeat.ts';
import type { AgentRecord, RunRecord, StepRecord } from '../run/records.ts';
import { getAgent } from '../store/agents.ts';
import { getConversation, getMessage, listMessagesBefore } from '../store/conversations.ts';
import { recentActiveMemories } from '../store/memories.ts';
import { getModelProvider, type ModelProviderRecord } from '../store/model-providers.ts';
import { MeshError } from '../tool/errors.ts';
import { turnDriver, type TurnEnvironment, type TurnModel } from '../turn/engine.ts';
import { receiveMessage } from '../turn/intake.ts';
import type { Mesh } from './mesh.ts';
import { runtimeFor } from './operator-call.ts';
import { turnPolicy } from './policy.ts';

/** Builds a model client for a provider row; the composition root supplies the key lookup. */
export type ModelClientFactory = (
  provider: ModelProviderRecord,
  onAttempt?: AttemptListener,
) => ModelClient;

/** Model attempts one run may make in all, retries included: a storm of 5xx ends the run. */
export const MODEL_ATTEMPTS_PER_RUN = 8;

/** The turn engine's environment over a Mesh. */
export function turnEnvironment(
  mesh: Mesh,
  clientFor: ModelClientFactory = defaultClientFor(mesh),
): TurnEnvironment {
  return {
    packages: mesh.catalog.packages,
    async loadTurn(run: RunRecord) {
      const agent = await getAgent(mesh.db, run.agentId);
      const conversation = run.conversationId
        ? await getConversation(mesh.db, run.conversationId)
        : undefined;
      const inbound = run.inboundMessageId
        ? await getMessage(mesh.db, run.inboundMessageId)
        : undefined;
      if (!agent || !conversation || !inbound) {
        throw new MeshError(
          'turn_incomplete',
          `run ${run.id} has no agent, conversation or inbound message`,
        );
      }
      const history = await listMessagesBefore(mesh.db, conversation.id, inbound.id);
      const memories = (await recentActiveMemories(mesh.db, agent.id, 20)).map((m) => ({
        id: m.id,
        content: m.content,
      }));
      return { agent, conversation, inbound, history, memories };
    },
    policyFor: (_run, agent, conversation) =>
      turnPolicy(mesh, agent.id, conversation.audience, conversation.id),
    runtimeFor: (run, signal, configFor) => runtimeFor(mesh, run, signal, configFor),
    async modelFor(agent: AgentRecord): Promise<TurnModel> {
      if (!agent.modelProviderId || !agent.model) {
        throw new MeshError(
          'agent_has_no_model',
          `agent ${agent.name} has no model provider; set one with mesh agents create --provider`,
        );
      }
      const provider = await getModelProvider(mesh.db, agent.modelProviderId);
      if (!provider)
        throw new MeshError(
          'provider_not_found',
          `agent ${agent.name}'s model provider no longer exists`,
        );
      let attempts = 0;
      const cap: AttemptListener = () => {
        attempts++;
        if (attempts > MODEL_ATTEMPTS_PER_RUN) {
          throw new ModelCallError(
            {
              code: 'server_error',
              message: `the run's ${MODEL_ATTEMPTS_PER_RUN} model attempts are spent`,
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

/** What a turn came to. */
export interface ChatResult {
  readonly runId: string;
  readonly conversationId: string;
  readonly status: string;
  readonly reason: string | null;
  readonly reply: string | null;
  readonly steps: readonly StepRecord[];
}

/**
 * Sends a message to an agent and drives its turn to the end in this process, under a lease:
 * the same run a worker would drive, resumable by one if this process dies.
 */
export async function chat(
  mesh: Mesh,
  input: {
    agentId: string;
    conversationId?: string;
    audience?: Audience;
    actor: string;
    body: string;
  },
): Promise<ChatResult> {
  return mesh.turnSlots.run(() => chatNow(mesh, input));
}

async function chatNow(mesh: Mesh, input: Parameters<typeof chat>[1]): Promise<ChatResult> {
  const owner = `chat:${process.pid}:${randomUUID().slice(0, 8)}`;
  const { conversation, run } = await receiveMessage(mesh.ledger, {
    agentId: input.agentId,
    ...(input.conversationId ? { conversationId: input.conversationId } : {}),
    ...(input.audience ? { audience: input.audience } : {}),
    actor: input.actor,
    body: input.body,
    lease: { owner, leaseMs: RUN_LEASE_MS },
  });
  const lease = { runId: run.id, owner, epoch: run.leaseEpoch };
  const end = await driveHeldRun(mesh.ledger, turnDriver(turnEnvironment(mesh)), run, lease);
  const steps = await mesh.ledger.steps(run.id);
  const reply = steps.find((s) => s.kind === 'reply');
  const body = reply?.kind === 'reply' ? reply.data.body : undefined;
  return {
    runId: run.id,
    conversationId: conversation.id,
    status: end.status,
    reason: end.reason,
    reply: typeof body === 'string' ? body : null,
    steps,
  };
}
