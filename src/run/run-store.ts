import type { JsonObject } from '../model/json.ts';
import type { DeclaredEffect, DeliveredEffect } from '../tool/outbound.ts';
import type { Audience } from '../policy/audience.ts';
import type {
  ArtifactRecord,
  CallStatus,
  ConversationRecord,
  HeldAtEnd,
  Lease,
  MessageRecord,
  NewArtifact,
  NewRun,
  NewStep,
  ReplyEnd,
  RunDraft,
  RunRecord,
  RunStatus,
  StepRecord,
} from './records.ts';
import type { AnswerRefusal, NewAnswer, NewExpiry, NewPark, QuestionRecord } from './questions.ts';

/** Which conversation an inbound message joins: an existing one, or a new one it starts. */
export type ConversationTarget =
  | { readonly kind: 'existing'; readonly id: string }
  | { readonly kind: 'new'; readonly id: string; readonly audience: Audience };

/** An inbound message, its conversation and the run it starts, written together. */
export interface InboundWrite {
  readonly agentId: string;
  readonly conversation: ConversationTarget;
  readonly message: {
    readonly id: string;
    readonly actor: string;
    readonly body: string;
    /** The credential's actor, when a relay token posted for `actor`. */
    readonly relayedBy?: string;
  };
  /** Builds the run once the conversation and message exist (inside the same transaction). */
  run(conversation: ConversationRecord, message: MessageRecord): NewRun;
}

import type { PromptPart } from './prompt-snapshot.ts';

/** One step of a batched write (see {@link RunStore.appendSteps}). */
export interface StepWrite {
  readonly step: NewStep;
  /** How long ago the step began, in ms, when that was before the write (a call that ran). */
  readonly startedMsAgo?: number;
  /** Artifacts of this step (a large observation whole, the bytes a call returned). */
  readonly artifacts?: readonly NewArtifact[];
  /** A model request's prompt snapshot parts, stored once each by hash in the same write. */
  readonly prompt?: readonly PromptPart[];
}

/** Steps written together, in order, with what the same write finishes and saves. */
export interface StepBatch {
  readonly steps: readonly StepWrite[];
  /** Call steps written earlier that this write ends (their observations are among `steps`). */
  readonly finish?: readonly { readonly seq: number; readonly status: CallStatus | 'refused' }[];
  /** The run's usage counters after the batch. */
  readonly usage?: JsonObject;
  /** Effects the batch's calls delivered: their outbound events are marked delivered with it. */
  readonly delivered?: readonly DeliveredEffect[];
  /** Declared effects recorded begun with their calls' stamps (`at`: the stamp's index). */
  readonly begun?: readonly { readonly at: number; readonly effect: BegunEffect }[];
  /**
   * Outbound events begun with a stamp whose call never ran (the round stopped first): marked
   * `failed`, attempts 0, saying nothing was sent.
   */
  readonly withdrawn?: readonly string[];
}

/**
 * A call's declared effect as its stamp's commit records it: `delivering`, attempts 1, keyed by
 * the stamp's step number as the run's lease holder (its only writer) expects it. When the stamp
 * is written under another number, the effect is not recorded, and the call records it itself.
 */
export interface BegunEffect extends DeclaredEffect {
  readonly id: string;
  readonly idempotencyKey: string;
  readonly stepSeq: number;
  readonly callId: string;
  readonly toolName: string;
}

/**
 * What the run layer needs from storage. Declared here, implemented by src/store (`runStore`), so
 * the ledger, the worker and the turn engine never see SQL or a driver. Every write that takes a
 * lease is fenced by it and rejects with `lease_lost` when the lease is no longer held.
 */
export interface RunStore {
  insertRun(run: NewRun): Promise<RunRecord>;
  getRun(id: string): Promise<RunRecord | undefined>;
  listSteps(runId: string): Promise<StepRecord[]>;
  /** Claims the oldest runnable run (queued, or running with an expired lease) for `owner`. */
  claimRunnable(owner: string, leaseMs: number): Promise<RunRecord | undefined>;
  /** Extends a lease; false when it was lost. */
  renewLease(lease: Lease, leaseMs: number): Promise<boolean>;
  /** Gives a run back to the queue at once (graceful shutdown). */
  releaseLease(lease: Lease): Promise<void>;
  /**
   * Appends one step; a `tool_call` with `committed` also stamps the run's `committed_at`. With
   * `usage`, the run's usage counters are replaced in the same write.
   */
  appendStep(lease: Lease, step: NewStep, usage?: JsonObject): Promise<StepRecord>;
  /**
   * Appends steps in order in one write (one commit): a round's response with the stamps of its
   * calls, or the round's observations. A committed `tool_call` stamps the run's `committed_at`.
   */
  appendSteps(lease: Lease, batch: StepBatch): Promise<StepRecord[]>;
  /**
   * Marks effects delivered outside a batch and without the lease (what a provider answered is
   * true whoever holds the run): a call stopped after its delivery, or a batch that failed.
   */
  settleDelivered(effects: readonly DeliveredEffect[]): Promise<void>;
  /** A stored artifact of a run, or undefined when the run holds none with that id. */
  getArtifact(runId: string, id: string): Promise<ArtifactRecord | undefined>;
  updateProgress(
    lease: Lease,
    progress: { usage?: JsonObject; checkpoint?: JsonObject },
  ): Promise<void>;
  /**
   * Saves the text the model has written so far in the run's current round (its call is
   * streaming), fenced by the lease; false when the lease is lost. The run's end deletes it.
   */
  writeDraft(lease: Lease, draft: RunDraft): Promise<boolean>;
  /** Ends a run with a status and a reason, clears its lease and deletes its draft. */
  finishRun(lease: Lease, status: RunStatus, reason: string | null): Promise<HeldAtEnd>;
  /**
   * Writes an inbound message (in an existing conversation or a new one) and its run in one
   * transaction. Undefined when the existing conversation is not this agent's.
   */
  receiveInbound(
    input: InboundWrite,
  ): Promise<
    { conversation: ConversationRecord; message: MessageRecord; run: RunRecord } | undefined
  >;
  /**
   * Writes the reply as an outbound message, the run's reply step and the reply's delivered
   * outbound event, in one commit.
   */
  recordReply(
    lease: Lease,
    reply: {
      readonly messageId: string;
      readonly conversationId: string;
      readonly actor: string;
      readonly body: string;
      /** The run's end the reply tells of, when it is not success. */
      readonly end?: ReplyEnd;
    },
  ): Promise<MessageRecord>;
  /**
   * Parks a run on a question, fenced by its lease: the parking call's step, the question posted
   * to the conversation, the open question and the run in `awaiting_input` without a lease, in
   * one transaction.
   */
  parkRun(lease: Lease, park: NewPark): Promise<{ step: StepRecord; message: MessageRecord }>;
  /**
   * Answers a run's open question (no lease: the run is parked): the answer message, the
   * parking call's observation, the question settled and the run queued again, in one
   * transaction; or the refusal that names why not.
   */
  answerQuestion(
    answer: NewAnswer,
  ): Promise<
    | { kind: 'answered'; message: MessageRecord; question: QuestionRecord; conversationId: string }
    | AnswerRefusal
  >;
  /** Ends a run whose question expired; false when it was answered or expired first. */
  expireQuestion(expiry: NewExpiry): Promise<boolean>;
}
