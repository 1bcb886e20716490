import type { Message, ModelResponse, Tool } from '../model/wire.ts';
import { exhaustion, usageJson, type Budget, type RunUsage } from '../run/budget.ts';
import { settleCalls } from '../run/call-loop.ts';
import type { DriveContext, RunEnd } from '../run/driver.ts';
import type { LedgerWrite } from '../run/ledger.ts';
import type { ModelResponseStep, StepRecord } from '../run/records.ts';
import type { ToolStepContext } from '../run/tool-step.ts';
import type { Clock } from '../tool/clock.ts';
import { hasCode, serializeError } from '../tool/errors.ts';
import { SPAN_ATTRIBUTES as A, withSpan } from '../tool/tracing.ts';
import { BROWSER_HANDOFF, handoffRefused } from './browser-handoff.ts';
import { estimateJson, fitContext } from './context-budget.ts';
import { HeldEnds } from './held-ends.ts';
import { readyHandoff } from './own-verbs.ts';
import { renderMemory, renderSystemPrompt } from './prompt.ts';
import { promptInput } from './prompt-input.ts';
import { replyDraft } from './reply-draft.ts';
import { withImages } from './round-images.ts';
import { callsJson, historyMessages, responseFrom, roundMessages } from './round-messages.ts';
import type { ToolLoading } from './tool-loading.ts';
import { ledgerEntries, renderLedger } from './truthful-ledger.ts';
import type { TurnEndings } from './turn-endings.ts';
import type { LoadedTurn, TurnEnvironment, TurnModel, TurnOffer } from './turn-environment.ts';

/** How a turn ends when its worker stops (a lease lost, a shutdown): another resumes it. */
const stopped = (): RunEnd => ({ status: 'interrupted', reason: 'the worker stopped' });

/** What a turn's rounds are driven with: read once, at the turn's start (engine.ts). */
export interface TurnRoundsInput {
  readonly env: TurnEnvironment;
  readonly ctx: DriveContext;
  readonly turn: LoadedTurn;
  readonly offer: TurnOffer;
  readonly model: TurnModel;
  readonly loading: ToolLoading;
  readonly stepCtx: ToolStepContext;
  readonly budget: Budget;
  readonly ends: TurnEndings;
  readonly clock: Clock;
  /** The run's steps so far: while this turn holds the lease, only it writes them. */
  readonly steps: StepRecord[];
  readonly usage: RunUsage;
}

/**
 * A turn's rounds: each asks the model (its request on record first, with the last round's held
 * ends), and settles the calls of its response (their write-ahead records in the same commit as
 * the response) until the model answers, a budget stops it, or it parks. Two commits a round.
 */
export class TurnRounds {
  readonly #in: TurnRoundsInput;
  #steps: StepRecord[];
  #usage: RunUsage;
  /** A round whose calls were settled with its response: the next pass starts the next round. */
  #settledRound = false;
  readonly #held: HeldEnds;
  /** When the run started: its wall-clock budget counts from here. */
  readonly #startedAt: Date;

  constructor(input: TurnRoundsInput) {
    this.#in = input;
    this.#startedAt = input.ctx.run.startedAt ?? input.ctx.run.createdAt;
    this.#steps = input.steps;
    this.#usage = input.usage;
    this.#held = new HeldEnds(input.ctx.ledger, input.ctx.lease);
  }

  /** Drives rounds until the turn ends; what a round's calls came to stays on record either way. */
  async drive(): Promise<RunEnd> {
    try {
      for (;;) {
        const end = await this.#round();
        if (end) return end;
      }
    } catch (error) {
      // A round's ends were held for the next request: what the calls came to stays on record.
      await this.#settleHeld();
      throw error;
    }
  }

  /** One pass: the last response's calls, then the next request and its response. */
  async #round(): Promise<RunEnd | undefined> {
    const { ctx, budget, ends, loading, clock } = this.#in;
    const maxRounds = budget.maxRounds;
    if (ctx.signal.aborted) {
      await this.#settleHeld();
      return stopped();
    }
    // Finish the calls of the last response first (a resumed run may have left some).
    const responses = this.#steps.filter((s) => s.kind === 'model_response');
    const last = responses.at(-1);
    if (last) {
      const pending = responseFrom(last).toolCalls;
      // A response without calls is the answer (a run that stopped before replying resumes here).
      if (pending.length === 0) return ends.answer(last, this.#steps);
      if (responses.length <= maxRounds && !this.#settledRound) {
        const end = await this.#settle(pending);
        if (end) return end;
      }
    }

    const round = this.#usage.rounds + 1;
    if (round > maxRounds) {
      await this.#writeHeld();
      return { status: 'failed', reason: `the model did not answer within ${maxRounds} rounds` };
    }
    const out = exhaustion(budget, { ...this.#usage, rounds: round }, this.#startedAt, clock.now());
    if (out) {
      await this.#writeHeld();
      return ends.stop(out, this.#steps);
    }
    const offered = round < maxRounds ? loading.offered() : [];
    const asked = await this.#request(round, offered);
    if ('end' in asked) return asked.end;
    const answered = await this.#complete(round, asked.request, asked.messages, offered);
    if ('end' in answered) return answered.end;
    return this.#respond(round, answered.response, offered);
  }

  /**
   * The round's request, fitted to the model's context and on record before it is sent, with the
   * last round's ends: a live view shows the round asking, and a crash leaves what it asked.
   */
  async #request(
    round: number,
    offered: readonly Tool[],
  ): Promise<{ request: StepRecord; messages: readonly Message[] } | { end: RunEnd }> {
    const { env, ctx, turn, offer, model, loading, budget, ends, stepCtx } = this.#in;
    const maxRounds = budget.maxRounds;
    const rebuilt = roundMessages(this.#steps);
    const pictured = model.imageInput
      ? await withImages(
          rebuilt,
          async (id) => (await ctx.ledger.artifact(ctx.run.id, id))?.content,
        )
      : { messages: rebuilt.messages, shown: 0 };
    const roundSoFar = pictured.messages;
    if (loading.notice) roundSoFar.push({ role: 'system', content: loading.notice });
    const entries = ledgerEntries(this.#steps);
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
    const [request] = await this.#writeHeld([
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
              ...offer.withheld.map((w) => ({ ...w })),
              ...(round < maxRounds
                ? []
                : stepCtx.registry
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
    this.#steps.push(request);
    const prospective = this.#usage.inputTokens + this.#usage.outputTokens + fitted.estimate.total;
    if (prospective > budget.maxTokens) {
      const reason = `budget exhausted: max tokens (${budget.maxTokens}) reached`;
      return { end: await ends.stop({ budget: 'maxTokens', reason }, this.#steps) };
    }
    return { request, messages: fitted.messages };
  }

  /** Sends the request; the reply's text as the model writes it is saved for live views. */
  async #complete(
    round: number,
    request: StepRecord,
    messages: readonly Message[],
    offered: readonly Tool[],
  ): Promise<{ response: ModelResponse } | { end: RunEnd }> {
    const { ctx, model } = this.#in;
    const draft = replyDraft(round, (d) => ctx.ledger.draft(ctx.lease, d));
    try {
      const response = await withSpan(
        {
          name: `chat ${model.model}`,
          kind: 'client',
          operation: 'chat',
          attributes: {
            [A.providerName]: model.client.kind,
            [A.requestModel]: model.model,
            [A.runId]: ctx.run.id,
            [A.round]: round,
            [A.step]: request.seq,
          },
        },
        () =>
          model.client.complete(
            { model: model.model, messages, tools: offered },
            { signal: ctx.signal, onText: draft.onText },
          ),
        (r) => ({
          attributes: {
            [A.finishReasons]: [r.finishReason],
            [A.inputTokens]: r.usage.inputTokens,
            [A.outputTokens]: r.usage.outputTokens,
          },
        }),
      );
      return { response };
    } catch (error) {
      if (ctx.signal.aborted) return { end: stopped() };
      if (hasCode(error, 'model_call_failed'))
        return {
          end: { status: 'failed', reason: `model call failed: ${serializeError(error).message}` },
        };
      throw error;
    } finally {
      await draft.close();
    }
  }

  /**
   * The response, with the run's usage after it: one write with the calls' write-ahead records,
   * before any of them runs. A response without calls is the answer.
   */
  async #respond(
    round: number,
    response: ModelResponse,
    offered: readonly Tool[],
  ): Promise<RunEnd | undefined> {
    const { ctx, ends } = this.#in;
    this.#usage = {
      ...this.#usage,
      rounds: round,
      inputTokens: this.#usage.inputTokens + response.usage.inputTokens,
      outputTokens: this.#usage.outputTokens + response.usage.outputTokens,
    };
    const calls = offered.length === 0 ? [] : response.message.toolCalls;
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
      const written = await ctx.ledger.recordSteps(ctx.lease, lead, usageJson(this.#usage));
      const answered = written.flatMap((w) => w.steps);
      this.#steps.push(...answered);
      return ends.answer(answered.at(-1) as ModelResponseStep, this.#steps);
    }
    const end = await this.#settle(calls, { writes: lead, usage: this.#usage });
    if (end) return end;
    this.#settledRound = true;
    return undefined;
  }

  /**
   * Settles a response's calls (with `lead`, the round's request and response not yet written:
   * they go in the same commit as the calls' write-ahead records). Undefined when the turn goes on
   * to its next round; otherwise how it ends.
   */
  async #settle(
    pending: ModelResponse['message']['toolCalls'],
    lead?: { readonly writes: readonly LedgerWrite[]; readonly usage: RunUsage },
  ): Promise<RunEnd | undefined> {
    const { ctx, stepCtx, budget, clock, ends, loading } = this.#in;
    const settled = await settleCalls({
      ctx: stepCtx,
      calls: pending,
      steps: this.#steps,
      usage: lead?.usage ?? this.#usage,
      budget,
      startedAt: this.#startedAt,
      clock,
      signal: ctx.signal,
      ...(lead ? { lead: lead.writes, leadUsage: usageJson(lead.usage) } : {}),
      // The round's ends go with the next request: two commits a round.
      deferEnds: true,
    });
    if (settled.kind === 'interrupted') return stopped();
    this.#steps = [...settled.steps];
    if (settled.kind === 'budget_exhausted') return ends.stop(settled.exhaustion, this.#steps);
    if (settled.kind === 'parked') {
      const handoff =
        settled.definition.tool.name === BROWSER_HANDOFF
          ? await readyHandoff(stepCtx.runtime)
          : undefined;
      if (handoff && 'refused' in handoff) {
        // No one could take the browser over: the model is told why, and goes on.
        await ctx.ledger.recordRefusal(
          ctx.lease,
          settled.call,
          settled.definition,
          handoffRefused(handoff.refused),
          usageJson(settled.usage),
        );
        this.#usage = settled.usage;
        this.#steps = await ctx.ledger.steps(ctx.run.id);
        return this.#settle(pending);
      }
      await loading.used(pending);
      return ends.park(settled, handoff?.link);
    }
    await loading.used(pending);
    this.#usage = settled.usage;
    this.#held.hold(settled.pending);
    return undefined;
  }

  /** Writes the last round's held ends with `also`, in one commit; what `also` wrote. */
  async #writeHeld(also: readonly LedgerWrite[] = []): Promise<StepRecord[]> {
    const written = await this.#held.write(this.#steps, also);
    this.#steps = written.steps;
    return written.also;
  }

  /** On the way out of a turn: the held ends are written when the lease still allows. */
  async #settleHeld(): Promise<void> {
    await this.#writeHeld().catch(() => undefined);
  }
}
