import { randomUUID } from 'node:crypto';
import type { JsonObject } from '../model/json.ts';
import type { ToolCall } from '../model/wire.ts';
import type { ToolAttachment } from '../tool/definition.ts';
import { toolEffect } from '../tool/effect.ts';
import { noRedaction, type Redactor } from '../tool/redaction.ts';
import type { Observation } from '../tool/observation.ts';
import type { DeliveredEffect } from '../tool/outbound.ts';
import type {
  ArtifactRecord,
  CallStatus,
  ConversationRecord,
  HeldAtEnd,
  Lease,
  MessageRecord,
  NewRun,
  NewStep,
  ReplyEnd,
  RunRecord,
  RunDraft,
  RunStatus,
  StepRecord,
  ToolCallStep,
} from './records.ts';
import type { InboundWrite, RunStore } from './run-store.ts';
import { announcingWrites } from './announcing-store.ts';

export type { LedgerWrite, PreparedSteps, RecordedWrite } from './ledger-writes.ts';
import { callStep, type CallDefinition } from './call-steps.ts';
import {
  mergedBatch,
  stepBatch,
  type LedgerWrite,
  type PreparedSteps,
  type RecordedWrite,
} from './ledger-writes.ts';
import type { NewAnswer, NewExpiry, QuestionKind } from './questions.ts';

export interface LedgerOptions {
  /** Observations larger than this many bytes are stored as artifacts and excerpted. */
  readonly observationLimitBytes?: number;
  /**
   * Removes held secrets from everything the outside world produced before it is written: model
   * output, tool-call arguments, observations, replies, failure reasons. What is stored is what
   * is later shown and sent back to the model, so cleaning here cleans every reader.
   */
  readonly redactor?: Redactor;
  /**
   * Called after a run ended (whatever its status), to free what the run rented: its workspace.
   * A failure here never changes the run's end; whatever it left is the reaper's.
   */
  readonly onRunEnded?: (runId: string, held: HeldAtEnd) => Promise<void>;
  /**
   * Called after each write to a run (a step, progress, a reply, its end) has committed, in this
   * process: live views of the run look again at once instead of at their next poll.
   */
  readonly onRunChanged?: (runId: string) => void;
}

export const DEFAULT_OBSERVATION_LIMIT = 16 * 1024;

/**
 * The durable record of a run, step by step. Every write is fenced by the caller's lease, so a
 * worker that lost its run can neither add steps nor cross a commit boundary.
 */
/** How many prompt part hashes a ledger remembers as stored before it starts over. */
const STORED_PARTS_KEPT = 20_000;

export class RunLedger {
  readonly store: RunStore;
  readonly observationLimitBytes: number;
  readonly redactor: Redactor;
  private readonly onRunEnded: ((runId: string, held: HeldAtEnd) => Promise<void>) | undefined;
  /** Prompt snapshot parts this process has written (by hash): not sent again. */
  private readonly storedParts = new Set<string>();

  constructor(store: RunStore, options: LedgerOptions = {}) {
    this.store = options.onRunChanged ? announcingWrites(store, options.onRunChanged) : store;
    this.observationLimitBytes = options.observationLimitBytes ?? DEFAULT_OBSERVATION_LIMIT;
    this.redactor = options.redactor ?? noRedaction;
    this.onRunEnded = options.onRunEnded;
  }

  /** `call` with held secrets removed from its arguments: what is recorded, and what runs. */
  cleanCall(call: ToolCall): ToolCall {
    const args = this.redactor.text(call.arguments);
    return args === call.arguments ? call : { ...call, arguments: args };
  }

  /** Creates a run, queued for a worker or (with `lease`) running under the caller's lease. */
  async createRun(run: Omit<NewRun, 'id'> & { id?: string }): Promise<RunRecord> {
    return this.store.insertRun({ ...run, id: run.id ?? randomUUID() });
  }

  async run(runId: string): Promise<RunRecord | undefined> {
    return this.store.getRun(runId);
  }

  async steps(runId: string): Promise<StepRecord[]> {
    return this.store.listSteps(runId);
  }

  /** A stored artifact of the run, or undefined when the run holds none with that id. */
  async artifact(runId: string, id: string): Promise<ArtifactRecord | undefined> {
    return this.store.getArtifact(runId, id);
  }

  /** Claims the oldest runnable run for `owner`, or undefined when none is runnable. */
  async claim(owner: string, leaseMs: number): Promise<RunRecord | undefined> {
    return this.store.claimRunnable(owner, leaseMs);
  }

  /** Extends a lease; false when it was lost. */
  async renew(lease: Lease, leaseMs: number): Promise<boolean> {
    return this.store.renewLease(lease, leaseMs);
  }

  /** Gives a run back to the queue (another worker may take it at once). */
  async release(lease: Lease): Promise<void> {
    await this.store.releaseLease(lease);
  }

  /** Appends one model request, model response or note step. */
  async appendStep(
    lease: Lease,
    step: Extract<NewStep, { kind: 'model_request' | 'model_response' | 'note' }>,
    usage?: JsonObject,
  ): Promise<StepRecord> {
    return this.store.appendStep(lease, { ...step, data: this.redactor.json(step.data) }, usage);
  }

  /**
   * Persists an inbound message (in its conversation, a new one when `conversation` says so) and
   * creates its run in the same transaction. Undefined when the existing conversation is not
   * this agent's.
   */
  async receiveInbound(
    input: InboundWrite,
  ): Promise<
    { conversation: ConversationRecord; message: MessageRecord; run: RunRecord } | undefined
  > {
    return this.store.receiveInbound(input);
  }

  /**
   * Writes the reply as an outbound message and the run's reply step, together. `end` is the run's
   * end the reply tells of (a budget ran out), kept on the step so a resumed run ends the same way.
   */
  async recordReply(
    lease: Lease,
    reply: { conversationId: string; actor: string; body: string; end?: ReplyEnd },
  ): Promise<MessageRecord> {
    return this.store.recordReply(lease, {
      ...reply,
      body: this.redactor.text(reply.body),
      ...(reply.end ? { end: { ...reply.end, reason: this.redactor.text(reply.end.reason) } } : {}),
      messageId: randomUUID(),
    });
  }

  /**
   * Writes `entries` in order in one commit (see {@link RunStore.appendSteps}): a round's response
   * with the write-ahead records of its calls, or the round's ends. Each entry's written steps
   * and, for an observation, what was stored (cleaned, excerpted when large) come back in the
   * entry's place.
   */
  async recordSteps(
    lease: Lease,
    entries: readonly LedgerWrite[],
    usage?: JsonObject,
  ): Promise<RecordedWrite[]> {
    const [written] = await this.recordPrepared(lease, [this.prepareSteps(entries)], usage);
    return written ?? [];
  }

  /** `entries` made into the rows they will be written as (cleaned, excerpted), not written. */
  prepareSteps(entries: readonly LedgerWrite[]): PreparedSteps {
    return stepBatch(
      {
        redactor: this.redactor,
        observationLimitBytes: this.observationLimitBytes,
        cleanCall: (call) => this.cleanCall(call),
      },
      entries,
    );
  }

  /**
   * Writes prepared batches in order in one commit: a round's ends held back to go with the next
   * model request. What each batch's entries wrote comes back in the batch's place.
   */
  async recordPrepared(
    lease: Lease,
    prepared: readonly PreparedSteps[],
    usage?: JsonObject,
  ): Promise<RecordedWrite[][]> {
    const merged = mergedBatch(prepared);
    // A prompt part this process has stored already is not sent again (the store keeps one copy).
    const steps = merged.steps.map((w) =>
      w.prompt ? { ...w, prompt: w.prompt.filter((p) => !this.storedParts.has(p.hash)) } : w,
    );
    let written: StepRecord[];
    try {
      written = await this.store.appendSteps(lease, {
        ...merged,
        steps,
        ...(usage ? { usage } : {}),
      });
    } catch (error) {
      // The calls' ends are lost with the write (a lost lease, a failed statement), but what the
      // providers answered is not: a resumed call finds its effects delivered, not unknown.
      await this.settleDelivered(merged.delivered ?? []).catch(() => undefined);
      throw error;
    }
    if (this.storedParts.size > STORED_PARTS_KEPT) this.storedParts.clear();
    for (const w of steps) for (const part of w.prompt ?? []) this.storedParts.add(part.hash);
    let at = 0;
    return prepared.map((p) => {
      const own = written.slice(at, at + p.batch.steps.length);
      at += p.batch.steps.length;
      return p.recorded(own);
    });
  }

  /**
   * Marks effects delivered without the lease (decision 0058): for a call stopped after its
   * delivery, whose end is not written. What a provider answered is true whoever holds the run.
   */
  async settleDelivered(effects: readonly DeliveredEffect[]): Promise<void> {
    await this.store.settleDelivered(effects);
  }

  /**
   * Records a tool call before it runs. For a call that crosses the commit boundary this is the
   * write-ahead stamp: the step and the run's `committed_at` are written in one statement, and
   * the call may run only after it commits.
   */
  async recordToolCall(
    lease: Lease,
    call: ToolCall,
    definition: CallDefinition,
  ): Promise<ToolCallStep> {
    const committed = toolEffect(definition).crossesCommitBoundary;
    const [written] = await this.recordSteps(lease, [
      { kind: 'call', call, definition, committed },
    ]);
    return asCall(written?.steps[0]);
  }

  /**
   * Records a call the executor refused before it ran (unknown tool, invalid arguments): the call
   * step and its observation, together.
   */
  async recordRefusal(
    lease: Lease,
    call: ToolCall,
    definition: CallDefinition | undefined,
    refusal: Observation,
    usage?: JsonObject,
  ): Promise<{ call: ToolCallStep; observation: StepRecord }> {
    const [written] = await this.recordSteps(
      lease,
      [{ kind: 'refused', call, definition, refusal }],
      usage,
    );
    const [first, second] = written?.steps ?? [];
    return { call: asCall(first), observation: second as StepRecord };
  }

  /**
   * Records a call's observation and ends its call step, together. An observation larger than
   * the limit is stored whole as an artifact; the step keeps its head and tail and the artifact
   * id. The bytes a call returned (`attachments`) are stored as artifacts of the same step, in
   * the same transaction.
   */
  async recordObservation(
    lease: Lease,
    callStep: Pick<ToolCallStep, 'seq' | 'callId' | 'toolName'>,
    result: Observation,
    callStatus: CallStatus = 'completed',
    attachments: readonly ToolAttachment[] = [],
    usage?: JsonObject,
  ): Promise<{ step: StepRecord; observation: Observation }> {
    const [written] = await this.recordSteps(
      lease,
      [{ kind: 'observed', callStep, result, status: callStatus, attachments }],
      usage,
    );
    return {
      step: written?.steps[0] as StepRecord,
      observation: written?.observation as Observation,
    };
  }

  /**
   * Parks the run on the question `call` asks: the call's step (started), the question posted to
   * the conversation as `actor`'s message, and the run in `awaiting_input` without a lease, in one
   * transaction. The run's next holder starts after someone answers.
   */
  async park(
    lease: Lease,
    park: {
      readonly call: ToolCall;
      readonly definition: CallDefinition;
      /** What the run waits for (an answer, or its browser handed back), and where to act. */
      readonly kind: QuestionKind;
      readonly link: string | null;
      readonly question: string;
      readonly choices: readonly string[];
      readonly body: string;
      readonly conversationId: string;
      readonly actor: string;
      readonly expiresInMs: number;
      readonly reason: string;
      readonly usage: JsonObject;
    },
  ): Promise<{ step: StepRecord; message: MessageRecord }> {
    const call = this.cleanCall(park.call);
    const step = callStep(call, park.definition, false);
    if (step.kind !== 'tool_call') throw new TypeError('a parking call is a tool_call step');
    return this.store.parkRun(lease, {
      kind: park.kind,
      link: park.link,
      callId: call.id,
      callStep: step,
      question: this.redactor.text(park.question),
      choices: park.choices.map((c) => this.redactor.text(c)),
      expiresInMs: park.expiresInMs,
      message: {
        id: randomUUID(),
        conversationId: park.conversationId,
        actor: park.actor,
        body: this.redactor.text(park.body),
      },
      reason: park.reason,
      usage: park.usage,
    });
  }

  /** Answers a parked run's question (see {@link RunStore.answerQuestion}); held secrets are removed from the observation. */
  answer(answer: NewAnswer): ReturnType<RunStore['answerQuestion']> {
    return this.store.answerQuestion({
      ...answer,
      observation: {
        question: this.redactor.json(answer.observation.question),
        browser_handoff: this.redactor.json(answer.observation.browser_handoff),
      },
    });
  }

  /** Ends a run whose question expired, telling its conversation; false when it was answered first. */
  expire(expiry: NewExpiry): Promise<boolean> {
    return this.store.expireQuestion({
      ...expiry,
      reason: this.redactor.text(expiry.reason),
      message: { ...expiry.message, body: this.redactor.text(expiry.message.body) },
    });
  }

  /** Saves the run's usage counters and, optionally, its checkpoint. */
  async progress(
    lease: Lease,
    progress: { usage?: JsonObject; checkpoint?: JsonObject },
  ): Promise<void> {
    await this.store.updateProgress(lease, progress);
  }

  /**
   * Saves the text the model has written so far in this round (a streaming call), redacted like
   * every text the ledger keeps, less a tail that could still grow into a held secret (a key the
   * model is halfway through is not whole yet, so redaction cannot see it). Not a record: live
   * views show it until the response is a step.
   */
  async draft(lease: Lease, draft: RunDraft): Promise<boolean> {
    const body = this.redactor.text(draft.body);
    return this.store.writeDraft(lease, {
      ...draft,
      body: body.slice(0, this.redactor.unfinished(body)),
    });
  }

  /** Ends the run with a status and a reason. */
  async finish(lease: Lease, status: RunStatus, reason: string | null): Promise<void> {
    const held = await this.store.finishRun(
      lease,
      status,
      reason === null ? null : this.redactor.text(reason),
    );
    await this.onRunEnded?.(lease.runId, held).catch(() => undefined);
  }
}

/** The call step the store returned for a call write (the store answers with the kind written). */
function asCall(step: StepRecord | undefined): ToolCallStep {
  if (step?.kind !== 'tool_call')
    throw new TypeError(`expected a tool_call step, got ${step?.kind ?? 'nothing'}`);
  return step;
}
