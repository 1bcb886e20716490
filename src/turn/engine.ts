import type { Span } from '@opentelemetry/api';
import { budgetFrom, usageFrom } from '../run/budget.ts';
import type { DriveContext, RunDriver, RunEnd } from '../run/driver.ts';
import type { ToolStepContext } from '../run/tool-step.ts';
import { systemClock } from '../tool/clock.ts';
import { createRegistry } from '../tool/registry.ts';
import { SPAN_ATTRIBUTES as A, withSpan } from '../tool/tracing.ts';
import { withOwnVerbs } from './own-verbs.ts';
import { turnEndings } from './turn-endings.ts';
import { planToolLoading } from './tool-loading.ts';
import { stopNotice } from './stop-notice.ts';
import type { TurnEnvironment } from './turn-environment.ts';
import { TurnRounds } from './turn-rounds.ts';

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
  const stepCtx: ToolStepContext = {
    ledger,
    lease,
    registry: loading.registry,
    runtime: env.runtimeFor(run, signal, offer.configFor),
    ...(env.hooks ? { hooks: env.hooks } : {}),
  };
  const budget = budgetFrom(run.budget);
  // Read once: while this turn holds the lease, only it writes the run's steps, so it keeps them.
  const steps = await ledger.steps(run.id);
  const replied = steps.find((s) => s.kind === 'reply');
  if (replied) return replied.data.end ?? { status: 'succeeded', reason: null };
  const stored = usageFrom(run.usage);
  const rounds = new TurnRounds({
    env,
    ctx,
    turn,
    offer,
    model,
    loading,
    stepCtx,
    budget,
    clock: env.clock ?? systemClock,
    steps,
    ends: turnEndings({
      ledger,
      lease,
      conversationId: turn.conversation.id,
      agentName: turn.agent.name,
      budget,
    }),
    usage: {
      ...stored,
      rounds: Math.max(stored.rounds, steps.filter((s) => s.kind === 'model_response').length),
      toolCalls: Math.max(stored.toolCalls, steps.filter((s) => s.kind === 'tool_call').length),
    },
  });
  return rounds.drive();
}
