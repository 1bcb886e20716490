import type { Span } from '@opentelemetry/api';
import type { ModelClient } from '../model/client.ts';
import type { JsonObject, JsonValue } from '../model/json.ts';
import type { AssistantMessage, Message, ModelResponse, ToolCall } from '../model/wire.ts';
import type { ToolPackage } from '../manifest/package-manifest.ts';
import {
  budgetFrom,
  exhaustion,
  usageFrom,
  type Exhaustion,
  type RunUsage,
} from '../run/budget.ts';
import { settleCalls } from '../run/call-loop.ts';
import { artifactLinksFrom } from '../run/observation-json.ts';
import type { DriveContext, RunDriver, RunEnd } from '../run/driver.ts';
import type {
  AgentRecord,
  ConversationRecord,
  MessageRecord,
  ModelResponseStep,
  RunRecord,
  StepRecord,
} from '../run/records.ts';
import type { CallHooks, ToolStepContext } from '../run/tool-step.ts';
import { systemClock, type Clock } from '../tool/clock.ts';
import type { ToolRuntime } from '../tool/context.ts';
import { hasCode, serializeError } from '../tool/errors.ts';
import type { ArtifactLink } from '../tool/observation.ts';
import type { Registry } from '../tool/registry.ts';
import { SPAN_ATTRIBUTES as A, withSpan } from '../tool/tracing.ts';
import { fitContext, estimateJson, type InputBudget } from './context-budget.ts';
import { exhaustionNotice } from './exhaustion-notice.ts';
import { renderMemory, renderSystemPrompt } from './prompt.ts';
import { withImages, type RoundImage } from './round-images.ts';
import { planToolLoading } from './tool-loading.ts';
import { ledgerEntries, renderLedger } from './truthful-ledger.ts';

/** The policy-scoped registry of a turn, with the reasons for every tool left out. */
export interface TurnOffer {
  readonly registry: Registry;
  readonly withheld: readonly { readonly name: string; readonly reason: string }[];
  configFor: ToolRuntime['configFor'];
  /** The agent's public tool settings, rendered into the system prompt. */
  readonly publicSettings: string;
}

/** The model a turn talks to, with its input budget. */
export interface TurnModel {
  readonly client: ModelClient;
  readonly model: string;
  readonly budget: InputBudget;
  /** The model accepts image input: images tools returned are added to its requests. */
  readonly imageInput?: boolean;
}

/** Everything a turn reads, wired by the composition root. */
export interface TurnEnvironment {
  readonly packages: readonly ToolPackage[];
  loadTurn(run: RunRecord): Promise<{
    agent: AgentRecord;
    conversation: ConversationRecord;
    inbound: MessageRecord;
    history: readonly MessageRecord[];
    memories: readonly { id: string; content: string }[];
  }>;
  /** What this turn may offer and execute (already scoped by policy), and what it may not, why. */
  policyFor(
    run: RunRecord,
    agent: AgentRecord,
    conversation: ConversationRecord,
  ): Promise<TurnOffer>;
  runtimeFor(run: RunRecord, signal: AbortSignal, configFor: ToolRuntime['configFor']): ToolRuntime;
  modelFor(agent: AgentRecord, run: RunRecord): Promise<TurnModel>;
  readonly hooks?: CallHooks;
  /** Where budgets read the time; the system clock when omitted. */
  readonly clock?: Clock;
}

function historyMessages(history: readonly MessageRecord[]): Message[] {
  return history.map((m) =>
    m.direction === 'inbound'
      ? { role: 'user', content: m.actor ? `${m.actor}: ${m.body}` : m.body }
      : { role: 'assistant', content: m.body, toolCalls: [] },
  );
}

function text(value: JsonValue | undefined): string {
  return typeof value === 'string' ? value : '';
}

function responseFrom(step: ModelResponseStep): AssistantMessage {
  const data = step.data;
  const calls = Array.isArray(data['toolCalls']) ? (data['toolCalls'] as JsonObject[]) : [];
  return {
    role: 'assistant',
    content: typeof data['content'] === 'string' ? data['content'] : '',
    toolCalls: calls.map((c) => ({
      id: text(c['id']),
      name: text(c['name']),
      arguments: text(c['arguments']),
    })),
  };
}

/**
 * This turn's round so far, rebuilt from its steps: assistant calls and their observations, and
 * where the images the observations link would go (after the tool messages of their round).
 */
function roundMessages(steps: readonly StepRecord[]): {
  messages: Message[];
  images: RoundImage[];
} {
  const out: Message[] = [];
  const images: RoundImage[] = [];
  let pending: ArtifactLink[] = [];
  const flush = () => {
    for (const link of pending) images.push({ afterIndex: out.length, link });
    pending = [];
  };
  for (const step of steps) {
    if (step.kind === 'model_response') {
      flush();
      const message = responseFrom(step);
      if (message.toolCalls.length > 0) out.push(message);
    } else if (step.kind === 'observation' && step.callId) {
      const text = step.observation['text'];
      out.push({
        role: 'tool',
        toolCallId: step.callId,
        content: typeof text === 'string' ? text : '',
      });
      pending.push(...artifactLinksFrom(step.observation).filter((l) => l.kind === 'image'));
    }
  }
  flush();
  return { messages: out, images };
}

function usageJson(u: RunUsage): JsonObject {
  return { ...u };
}

function callsJson(calls: readonly ToolCall[]): JsonValue[] {
  return calls.map((c) => ({ id: c.id, name: c.name, arguments: c.arguments }));
}

/**
 * The turn engine: a message to an agent becomes rounds of model requests and tool calls, each
 * persisted as steps, ending in a reply written against the ledger of what actually committed.
 * Rounds are capped by the run's budget (copied from its agent's profile when it was created); on
 * the last permitted round the request carries no tools at all. Resumable: a run picked up by another worker continues from its steps.
 */
export function turnDriver(env: TurnEnvironment): RunDriver {
  return {
    kind: 'turn',
    drive: (ctx) =>
      withSpan(
        {
          name: 'invoke_agent',
          kind: 'internal',
          operation: 'invoke_agent',
          attributes: {
            [A.runId]: ctx.run.id,
            [A.agentId]: ctx.run.agentId,
            [A.conversationId]: ctx.run.conversationId ?? undefined,
          },
        },
        (span) => driveTurn(env, ctx, span),
        (end) => ({
          attributes: { [A.runStatus]: end.status },
          ...(end.status === 'failed' ? { error: 'turn_failed' } : {}),
        }),
      ),
  };
}

/** One turn's work, inside its `invoke_agent` span (named for the agent once it is loaded). */
async function driveTurn(env: TurnEnvironment, ctx: DriveContext, span: Span): Promise<RunEnd> {
  const { run, lease, ledger, signal } = ctx;
  const turn = await env.loadTurn(run);
  span.updateName(`invoke_agent ${turn.agent.name}`);
  span.setAttribute(A.agentName, turn.agent.name);
  const offer = await env.policyFor(run, turn.agent, turn.conversation);
  const model = await env.modelFor(turn.agent, run);
  // Every schema, or the agent's own verbs and tool_search plus what searches loaded; calls
  // resolve against the whole authorized registry either way.
  const loading = await planToolLoading({
    registry: offer.registry,
    budget: model.budget,
    checkpoint: run.checkpoint,
    save: (checkpoint) => ledger.progress(lease, { checkpoint }),
  });
  const registry = loading.registry;
  const stepCtx: ToolStepContext = {
    ledger,
    lease,
    registry,
    runtime: env.runtimeFor(run, signal, offer.configFor),
    ...(env.hooks ? { hooks: env.hooks } : {}),
  };
  const budget = budgetFrom(run.budget);
  const maxRounds = budget.maxRounds;
  const startedAt = run.startedAt ?? run.createdAt;
  const clock = env.clock ?? systemClock;
  // Read once: while this turn holds the lease, only it writes the run's steps, so it keeps them.
  let steps = await ledger.steps(run.id);
  const replied = steps.find((s) => s.kind === 'reply');
  if (replied) return replied.data.end ?? { status: 'succeeded', reason: null };
  /** Tells the conversation the run stopped on a budget, and ends the run so. */
  const stop = async (exhausted: Exhaustion, answer?: string): Promise<RunEnd> => {
    const end = { status: 'budget_exhausted', reason: exhausted.reason } as const;
    await ledger.recordReply(lease, {
      conversationId: turn.conversation.id,
      actor: turn.agent.name,
      body: exhaustionNotice({
        exhaustion: exhausted,
        steps,
        agentName: turn.agent.name,
        ...(answer === undefined ? {} : { answer }),
      }),
      end,
    });
    return end;
  };
  /**
   * The run's answer, from the response that called no tools. On the last round, one that wanted
   * more (it asked for tools it was not offered, or said nothing) stopped on the round budget.
   */
  const answer = async (step: ModelResponseStep): Promise<RunEnd> => {
    const content = typeof step.data['content'] === 'string' ? step.data['content'] : '';
    const wantedMore = Array.isArray(step.data['ignoredToolCalls']) || content.trim() === '';
    if (step.data['round'] === maxRounds && wantedMore) {
      return stop(
        { budget: 'maxRounds', reason: `budget exhausted: max rounds (${maxRounds}) reached` },
        content,
      );
    }
    await ledger.recordReply(lease, {
      conversationId: turn.conversation.id,
      actor: turn.agent.name,
      body: content.trim() !== '' ? content : 'The model gave an empty answer.',
    });
    return { status: 'succeeded', reason: null };
  };
  const stored = usageFrom(run.usage);
  let usage: RunUsage = {
    ...stored,
    rounds: Math.max(stored.rounds, steps.filter((s) => s.kind === 'model_response').length),
    toolCalls: Math.max(stored.toolCalls, steps.filter((s) => s.kind === 'tool_call').length),
  };

  for (;;) {
    if (signal.aborted) return { status: 'interrupted', reason: 'the worker stopped' };
    // Finish the calls of the last response first (a resumed run may have left some).
    const responses = steps.filter((s) => s.kind === 'model_response');
    const last = responses.at(-1);
    if (last) {
      const pending = responseFrom(last).toolCalls;
      // A response without calls is the answer (a run that stopped before replying resumes here).
      if (pending.length === 0) return answer(last);
      if (pending.length > 0 && responses.length <= maxRounds) {
        const settled = await settleCalls({
          ctx: stepCtx,
          calls: pending,
          steps,
          usage,
          budget,
          startedAt,
          clock,
          signal,
        });
        if (settled.kind === 'interrupted')
          return { status: 'interrupted', reason: 'the worker stopped' };
        if (settled.kind === 'budget_exhausted') {
          steps = [...(await ledger.steps(run.id))];
          return stop(settled.exhaustion);
        }
        await loading.used(pending);
        usage = settled.usage;
        // The lease fences every write of this run: no one else can have added a step.
        steps = [...settled.steps];
      }
    }

    const round = usage.rounds + 1;
    if (round > maxRounds) {
      return {
        status: 'failed',
        reason: `the model did not answer within ${maxRounds} rounds`,
      };
    }
    const out = exhaustion(budget, { ...usage, rounds: round }, startedAt, clock.now());
    if (out) return stop(out);

    const offered = round < maxRounds ? loading.offered() : [];
    const rebuilt = roundMessages(steps);
    const pictured = model.imageInput
      ? await withImages(rebuilt, async (id) => (await ledger.artifact(run.id, id))?.content)
      : { messages: rebuilt.messages, shown: 0 };
    const roundSoFar = pictured.messages;
    if (loading.notice) roundSoFar.push({ role: 'system', content: loading.notice });
    const entries = ledgerEntries(steps);
    if (entries.length > 0) roundSoFar.push({ role: 'system', content: renderLedger(entries) });
    const fitted = await fitContext(
      {
        system: renderSystemPrompt({
          agentName: turn.agent.name,
          persona: turn.agent.persona,
          audience: turn.conversation.audience,
          offeredTools: offered.map((t) => t.name),
          toolSearch: loading.decision.index && offered.length > 0,
          packages: env.packages,
          memories: turn.memories,
          publicSettings: offer.publicSettings,
        }),
        memory: renderMemory(turn.memories),
        history: historyMessages(turn.history),
        current: historyMessages([turn.inbound])[0] as Message,
        round: roundSoFar,
        tools: offered,
      },
      model.budget,
    );
    const request = await ledger.appendStep(lease, {
      kind: 'model_request',
      data: {
        round,
        model: model.model,
        provider: model.client.kind,
        estimate: estimateJson(fitted.estimate),
        ...(pictured.shown > 0 ? { images: pictured.shown } : {}),
        offered: offered.map((t) => t.name),
        ...(round < maxRounds ? {} : { lastRound: true }),
        loading: loading.requestData(),
        withheld: [
          ...offer.withheld.map((w) => ({ ...w })),
          ...(round < maxRounds
            ? []
            : registry
                .tools()
                .map((t) => ({ name: t.name, reason: 'last permitted round: no tools' }))),
        ],
        ledger: entries.map((e) => ({ ...e })),
      },
    });
    steps.push(request);
    const prospective = usage.inputTokens + usage.outputTokens + fitted.estimate.total;
    if (prospective > budget.maxTokens) {
      return stop({
        budget: 'maxTokens',
        reason: `budget exhausted: max tokens (${budget.maxTokens}) reached`,
      });
    }

    let response: ModelResponse;
    try {
      response = await withSpan(
        {
          name: `chat ${model.model}`,
          kind: 'client',
          operation: 'chat',
          attributes: {
            [A.providerName]: model.client.kind,
            [A.requestModel]: model.model,
            [A.runId]: run.id,
            [A.round]: round,
            [A.step]: request.seq,
          },
        },
        () =>
          model.client.complete(
            { model: model.model, messages: fitted.messages, tools: offered },
            { signal },
          ),
        (r) => ({
          attributes: {
            [A.finishReasons]: [r.finishReason],
            [A.inputTokens]: r.usage.inputTokens,
            [A.outputTokens]: r.usage.outputTokens,
          },
        }),
      );
    } catch (error) {
      if (signal.aborted) return { status: 'interrupted', reason: 'the worker stopped' };
      if (hasCode(error, 'model_call_failed')) {
        return {
          status: 'failed',
          reason: `model call failed: ${serializeError(error).message}`,
        };
      }
      throw error;
    }
    usage = {
      ...usage,
      rounds: round,
      inputTokens: usage.inputTokens + response.usage.inputTokens,
      outputTokens: usage.outputTokens + response.usage.outputTokens,
    };
    const calls = offered.length === 0 ? [] : response.message.toolCalls;
    // The response and the run's usage after it, in one write.
    const answered = await ledger.appendStep(
      lease,
      {
        kind: 'model_response',
        data: {
          round,
          content: response.message.content,
          toolCalls: callsJson(calls),
          finishReason: response.finishReason,
          usage: { ...response.usage },
          ...(calls.length < response.message.toolCalls.length
            ? { ignoredToolCalls: callsJson(response.message.toolCalls) }
            : {}),
        },
      },
      usageJson(usage),
    );
    steps.push(answered);

    if (calls.length === 0) return answer(answered as ModelResponseStep);
  }
}
