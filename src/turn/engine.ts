import type { Span } from '@opentelemetry/api';
import type { Message, ModelResponse } from '../model/wire.ts';
import { budgetFrom, exhaustion, usageFrom, usageJson, type RunUsage } from '../run/budget.ts';
import { settleCalls } from '../run/call-loop.ts';
import type { DriveContext, RunDriver, RunEnd } from '../run/driver.ts';
import type { LedgerWrite } from '../run/ledger.ts';
import type { ModelResponseStep, StepRecord } from '../run/records.ts';
import type { ToolStepContext } from '../run/tool-step.ts';
import { systemClock } from '../tool/clock.ts';
import { hasCode, serializeError } from '../tool/errors.ts';
import { createRegistry } from '../tool/registry.ts';
import { SPAN_ATTRIBUTES as A, withSpan } from '../tool/tracing.ts';
import { fitContext, estimateJson } from './context-budget.ts';
import { renderMemory, renderSystemPrompt } from './prompt.ts';
import { BROWSER_HANDOFF, handoffRefused } from './browser-handoff.ts';
import { HeldEnds } from './held-ends.ts';
import { readyHandoff, withOwnVerbs } from './own-verbs.ts';
import { turnEndings } from './turn-endings.ts';
import { withImages } from './round-images.ts';
import { callsJson, historyMessages, responseFrom, roundMessages } from './round-messages.ts';
import { planToolLoading } from './tool-loading.ts';
import { promptInput } from './prompt-input.ts';
import { ledgerEntries, renderLedger } from './truthful-ledger.ts';
import { replyDraft } from './reply-draft.ts';
import { stopNotice } from './stop-notice.ts';
import type { TurnEnvironment } from './turn-environment.ts';

export type { TurnEnvironment, TurnModel, TurnOffer } from './turn-environment.ts';

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
    // The conversation hears why its turn will not be resumed, and what was done before it stopped.
    async giveUp({ run, lease, ledger }, reason) {
      const [turn, steps] = await Promise.all([env.loadTurn(run), ledger.steps(run.id)]);
      if (steps.some((s) => s.kind === 'reply')) return;
      await ledger.recordReply(lease, {
        conversationId: turn.conversation.id,
        actor: turn.agent.name,
        body: stopNotice({
          headline: `I stopped before finishing: this turn was ${reason}.`,
          steps,
        }),
        end: { status: 'failed', reason },
      });
    },
  };
}

/** One turn's work, inside its `invoke_agent` span (named for the agent once it is loaded). */
async function driveTurn(env: TurnEnvironment, ctx: DriveContext, span: Span): Promise<RunEnd> {
  const { run, lease, ledger, signal } = ctx;
  const turn = await env.loadTurn(run);
  span.updateName(`invoke_agent ${turn.agent.name}`);
  span.setAttribute(A.agentName, turn.agent.name);
  // Issued together: their reads share round trips where the database allows (Mesh.reads).
  const [offer, model] = await Promise.all([
    env.policyFor(run, turn.agent, turn.conversation),
    env.modelFor(turn.agent, run),
  ]);
  // Every schema, or the agent's own verbs and tool_search plus what searches loaded; calls
  // resolve against the whole authorized registry either way.
  const withheld = offer.withheld;
  const loading = await planToolLoading({
    registry: createRegistry(
      withOwnVerbs(offer.registry.definitions(), {
        openCommitments: turn.commitments.length,
        memories: turn.memories.length,
      }),
    ),
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
  // A round whose calls were settled with its response: the next pass starts the next round.
  let settledRound = false;
  const replied = steps.find((s) => s.kind === 'reply');
  if (replied) return replied.data.end ?? { status: 'succeeded', reason: null };
  const ends = turnEndings({
    ledger,
    lease,
    conversationId: turn.conversation.id,
    agentName: turn.agent.name,
    budget,
  });
  const stored = usageFrom(run.usage);
  let usage: RunUsage = {
    ...stored,
    rounds: Math.max(stored.rounds, steps.filter((s) => s.kind === 'model_response').length),
    toolCalls: Math.max(stored.toolCalls, steps.filter((s) => s.kind === 'tool_call').length),
  };

  /**
   * Settles a response's calls (with `lead`, the round's request and response not yet written:
   * they go in the same commit as the calls' write-ahead records). Undefined when the turn goes on
   * to its next round; otherwise how it ends.
   */
  const settle = async (
    pending: ModelResponse['message']['toolCalls'],
    lead?: { readonly writes: readonly LedgerWrite[]; readonly usage: RunUsage },
  ): Promise<RunEnd | undefined> => {
    const settled = await settleCalls({
      ctx: stepCtx,
      calls: pending,
      steps,
      usage: lead?.usage ?? usage,
      budget,
      startedAt,
      clock,
      signal,
      ...(lead ? { lead: lead.writes, leadUsage: usageJson(lead.usage) } : {}),
      // The round's ends go with the next request: two commits a round.
      deferEnds: true,
    });
    if (settled.kind === 'interrupted')
      return { status: 'interrupted', reason: 'the worker stopped' };
    steps = [...settled.steps];
    if (settled.kind === 'budget_exhausted') return ends.stop(settled.exhaustion, steps);
    if (settled.kind === 'parked') {
      const handoff =
        settled.definition.tool.name === BROWSER_HANDOFF
          ? await readyHandoff(stepCtx.runtime)
          : undefined;
      if (handoff && 'refused' in handoff) {
        // No one could take the browser over: the model is told why, and goes on.
        const refusal = handoffRefused(handoff.refused);
        await ledger.recordRefusal(
          lease,
          settled.call,
          settled.definition,
          refusal,
          usageJson(settled.usage),
        );
        usage = settled.usage;
        steps = await ledger.steps(run.id);
        return settle(pending);
      }
      await loading.used(pending);
      return ends.park(settled, handoff?.link);
    }
    await loading.used(pending);
    usage = settled.usage;
    held.hold(settled.pending);
    return undefined;
  };

  const held = new HeldEnds(ledger, lease);
  /** Writes the last round's held ends with `also`, in one commit; what `also` wrote. */
  const writeHeld = async (also: readonly LedgerWrite[] = []): Promise<StepRecord[]> => {
    const written = await held.write(steps, also);
    steps = written.steps;
    return written.also;
  };
  /** On the way out of a turn: the held ends are written when the lease still allows. */
  const settleHeld = () => writeHeld().catch(() => undefined);

  try {
    for (;;) {
      if (signal.aborted) {
        await settleHeld();
        return { status: 'interrupted', reason: 'the worker stopped' };
      }
      // Finish the calls of the last response first (a resumed run may have left some).
      const responses = steps.filter((s) => s.kind === 'model_response');
      const last = responses.at(-1);
      if (last) {
        const pending = responseFrom(last).toolCalls;
        // A response without calls is the answer (a run that stopped before replying resumes here).
        if (pending.length === 0) return ends.answer(last, steps);
        if (responses.length <= maxRounds && !settledRound) {
          const end = await settle(pending);
          if (end) return end;
        }
      }

      const round = usage.rounds + 1;
      if (round > maxRounds) {
        await writeHeld();
        return {
          status: 'failed',
          reason: `the model did not answer within ${maxRounds} rounds`,
        };
      }
      const out = exhaustion(budget, { ...usage, rounds: round }, startedAt, clock.now());
      if (out) {
        await writeHeld();
        return ends.stop(out, steps);
      }

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
            commitments: turn.commitments,
            publicSettings: offer.publicSettings,
          }),
          memory: renderMemory(turn.memories),
          history: historyMessages(turn.history),
          current: historyMessages([turn.inbound])[0] as Message,
          round: roundSoFar,
          kept: rebuilt.kept,
          tools: offered,
        },
        model.budget,
      );
      // On record before it is sent, with the last round's ends: a live view shows the round
      // asking, and a crash leaves what it asked.
      const [request] = await writeHeld([
        {
          kind: 'step',
          step: {
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
                ...withheld.map((w) => ({ ...w })),
                ...(round < maxRounds
                  ? []
                  : registry
                      .tools()
                      .map((t) => ({ name: t.name, reason: 'last permitted round: no tools' }))),
              ],
              ledger: entries.map((e) => ({ ...e })),
            },
          },
          // What the model is sent, exactly: kept as the request's prompt snapshot.
          prompt: promptInput(fitted.messages, offered, model.model),
        },
      ]);
      if (!request) throw new TypeError('the model request was not written');
      steps.push(request);
      const prospective = usage.inputTokens + usage.outputTokens + fitted.estimate.total;
      if (prospective > budget.maxTokens) {
        return ends.stop(
          {
            budget: 'maxTokens',
            reason: `budget exhausted: max tokens (${budget.maxTokens}) reached`,
          },
          steps,
        );
      }

      let response: ModelResponse;
      // The reply's text as the model writes it, saved for live views; the response is the record.
      const draft = replyDraft(round, (d) => ledger.draft(lease, d));
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
              { signal, onText: draft.onText },
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
        await draft.close();
        if (signal.aborted) return { status: 'interrupted', reason: 'the worker stopped' };
        if (hasCode(error, 'model_call_failed')) {
          return {
            status: 'failed',
            reason: `model call failed: ${serializeError(error).message}`,
          };
        }
        throw error;
      }
      await draft.close();
      usage = {
        ...usage,
        rounds: round,
        inputTokens: usage.inputTokens + response.usage.inputTokens,
        outputTokens: usage.outputTokens + response.usage.outputTokens,
      };
      const calls = offered.length === 0 ? [] : response.message.toolCalls;
      // The response, with the run's usage after it: one write with the calls' write-ahead
      // records, before any of them runs.
      const lead: LedgerWrite[] = [
        {
          kind: 'step',
          step: {
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
        },
      ];
      if (calls.length === 0) {
        const written = await ledger.recordSteps(lease, lead, usageJson(usage));
        const answered = written.flatMap((w) => w.steps);
        steps.push(...answered);
        return ends.answer(answered.at(-1) as ModelResponseStep, steps);
      }
      const end = await settle(calls, { writes: lead, usage });
      if (end) return end;
      settledRound = true;
    }
  } catch (error) {
    // A round's ends were held for the next request: what the calls came to stays on record.
    await settleHeld();
    throw error;
  }
}
