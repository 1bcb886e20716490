import { formatSeconds, usageJson, type Budget, type Exhaustion } from '../run/budget.ts';
import type { CallsSettled } from '../run/call-plan.ts';
import type { RunEnd } from '../run/driver.ts';
import type { RunLedger } from '../run/ledger.ts';
import type { Lease, ModelResponseStep, StepRecord } from '../run/records.ts';
import { handoffAsk } from './browser-handoff.ts';
import { questionBody, questionFrom } from './request-input.ts';
import { exhaustionNotice } from './stop-notice.ts';

/** The ways a turn's run ends or waits, each told to its conversation. */
export interface TurnEndings {
  /** Tells the conversation the run stopped on a budget (what it did, what it did not). */
  stop(exhausted: Exhaustion, steps: readonly StepRecord[], answer?: string): Promise<RunEnd>;
  /**
   * Parks the run on the question a request_input call asks: posted to the conversation as the
   * agent's message, the run waiting in awaiting_input with no lease. The answer, from anyone in
   * the conversation, is the call's observation, and a worker resumes the run from there. With a
   * Live View link, the call is a browser handoff: the run waits for its browser handed back.
   */
  park(parked: Extract<CallsSettled, { kind: 'parked' }>, handoffLink?: string): Promise<RunEnd>;
  /**
   * Replies with the response that called no tools. On the last round, one that wanted more (it
   * asked for tools it was not offered, or said nothing) stopped on the round budget.
   */
  answer(step: ModelResponseStep, steps: readonly StepRecord[]): Promise<RunEnd>;
}

export function turnEndings(input: {
  readonly ledger: RunLedger;
  readonly lease: Lease;
  readonly conversationId: string;
  readonly agentName: string;
  readonly budget: Budget;
}): TurnEndings {
  const { ledger, lease, conversationId, agentName, budget } = input;
  const stop: TurnEndings['stop'] = async (exhausted, steps, answer) => {
    const end = { status: 'budget_exhausted', reason: exhausted.reason } as const;
    await ledger.recordReply(lease, {
      conversationId,
      actor: agentName,
      body: exhaustionNotice({
        exhaustion: exhausted,
        steps,
        agentName,
        ...(answer === undefined ? {} : { answer }),
      }),
      end,
    });
    return end;
  };
  return {
    stop,
    async park(parked, handoffLink) {
      // A browser handoff (with the Live View link the person acts through), or a question.
      const ask =
        handoffLink === undefined
          ? (({ question, choices }) => ({
              kind: 'question' as const,
              question,
              choices,
              body: questionBody({ question, choices }),
            }))(questionFrom(parked.args))
          : {
              kind: 'browser_handoff' as const,
              choices: [],
              ...handoffAsk(parked.args, handoffLink),
            };
      const waitsFor =
        ask.kind === 'question'
          ? 'an answer to its question'
          : 'a person to take its browser over and hand it back';
      const reason = `waiting for ${waitsFor} (${formatSeconds(budget.questionWaitMs / 1000)} at most)`;
      await ledger.park(lease, {
        call: parked.call,
        definition: parked.definition,
        kind: ask.kind,
        link: handoffLink ?? null,
        question: ask.question,
        choices: ask.choices,
        body: ask.body,
        conversationId,
        actor: agentName,
        expiresInMs: budget.questionWaitMs,
        reason,
        usage: usageJson(parked.usage),
      });
      return { status: 'awaiting_input', reason };
    },
    async answer(step, steps) {
      const content = typeof step.data['content'] === 'string' ? step.data['content'] : '';
      const wantedMore = Array.isArray(step.data['ignoredToolCalls']) || content.trim() === '';
      if (step.data['round'] === budget.maxRounds && wantedMore) {
        const reason = `budget exhausted: max rounds (${budget.maxRounds}) reached`;
        return stop({ budget: 'maxRounds', reason }, steps, content);
      }
      await ledger.recordReply(lease, {
        conversationId,
        actor: agentName,
        body: content.trim() !== '' ? content : 'The model gave an empty answer.',
      });
      return { status: 'succeeded', reason: null };
    },
  };
}
