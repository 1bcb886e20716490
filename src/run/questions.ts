import type { JsonObject } from '../model/json.ts';
import type { NewStep } from './records.ts';

/*
 * A question a run asks its conversation (request_input) and waits on in `awaiting_input`,
 * holding no lease: the run layer's vocabulary for parking on it, answering it and expiring it.
 * src/store implements these.
 */

export type QuestionState = 'open' | 'answered' | 'expired';

/** A question as stored. */
/** What a parked run waits for: an answer to its question, or its browser handed back. */
export type QuestionKind = 'question' | 'browser_handoff';

/** The tool whose call parks a run on each kind (the answer is that call's observation). */
export const PARKING_TOOL: Readonly<Record<QuestionKind, string>> = {
  question: 'request_input',
  browser_handoff: 'browser_handoff',
};

export interface QuestionRecord {
  readonly runId: string;
  readonly kind: QuestionKind;
  /** Where the person acts (a handoff's Live View link); null for a question. */
  readonly link: string | null;
  /** The parking call, and its step. */
  readonly callId: string;
  readonly stepSeq: number;
  readonly question: string;
  readonly choices: readonly string[];
  /** The question as posted to the conversation. */
  readonly messageId: string | null;
  readonly state: QuestionState;
  readonly askedAt: Date;
  readonly expiresAt: Date;
  readonly answeredBy: string | null;
  readonly answerMessageId: string | null;
  readonly settledAt: Date | null;
}

/** Parking a run on a question, under its lease. */
export interface NewPark {
  readonly kind: QuestionKind;
  readonly link: string | null;
  readonly callId: string;
  /** The parking call's step, written `started`: its observation is the answer. */
  readonly callStep: Extract<NewStep, { kind: 'tool_call' }>;
  readonly question: string;
  readonly choices: readonly string[];
  readonly expiresInMs: number;
  /** The question as posted to the conversation, attributed to the agent. */
  readonly message: {
    readonly id: string;
    readonly conversationId: string;
    readonly actor: string;
    readonly body: string;
  };
  /** The run's reason while it waits. */
  readonly reason: string;
  /** The run's usage with the parking call counted. */
  readonly usage: JsonObject;
}

/** An answer to a run's open question. */
export interface NewAnswer {
  readonly runId: string;
  readonly actor: string;
  /** The credential's actor, when a relay token answered for `actor`. */
  readonly relayedBy?: string;
  readonly body: string;
  /** The answer's message id (the observation names it). */
  readonly messageId: string;
  /** The parking call's observation, by what the run waits for: who answered, and what. */
  readonly observation: Readonly<Record<QuestionKind, JsonObject>>;
}

/** Why an answer was not taken: the run is unknown, not waiting, past its expiry, or the actor is not in the conversation. */
export interface AnswerRefusal {
  readonly kind: 'refused';
  readonly code: 'run_not_found' | 'not_awaiting_input' | 'question_expired' | 'not_a_participant';
  /** The run's status, when it exists. */
  readonly status?: string;
}

/** An open question past its expiry, with what telling its conversation needs. */
export interface ExpiringQuestion extends QuestionRecord {
  readonly agentId: string;
  readonly conversationId: string | null;
  readonly budget: JsonObject;
}

/** Ending a run whose question expired. */
export interface NewExpiry {
  readonly runId: string;
  readonly callId: string;
  readonly reason: string;
  readonly observation: JsonObject;
  /** What the conversation is told, attributed to the agent. */
  readonly message: {
    readonly id: string;
    readonly conversationId: string;
    readonly actor: string;
    readonly body: string;
  };
}
