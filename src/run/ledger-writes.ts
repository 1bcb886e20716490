import type { ToolCall } from '../model/wire.ts';
import type { ToolAttachment } from '../tool/definition.ts';
import type { Observation } from '../tool/observation.ts';
import type { DeliveredEffect } from '../tool/outbound.ts';
import type { Redactor } from '../tool/redaction.ts';
import { callStep, pinOf, type CallDefinition } from './call-steps.ts';
import { attachmentArtifacts, largeObservation } from './observation-artifacts.ts';
import { observationJson, redactedObservation } from './observation-json.ts';
import { snapshotParts, type PromptInput } from './prompt-snapshot.ts';
import type { CallStatus, NewArtifact, NewStep, StepRecord, ToolCallStep } from './records.ts';
import type { BegunEffect, StepBatch, StepWrite } from './run-store.ts';

/**
 * One entry of a ledger write (`RunLedger.recordSteps`):
 * - `step`: a model request or response, or a note (`startedMsAgo`: when it really began);
 * - `call`: a call's record ahead of it (with `committed`, its write-ahead commit stamp);
 * - `observed`: the observation of a call recorded earlier, which ends its step with `status`
 *   (`refused`: recorded with its round and never run, the run stopped first), and marks the
 *   effects it delivered delivered;
 * - `ran`: a call recorded after it ran (a replayable query) and its observation;
 * - `refused`: a call the executor refused before it ran, and the refusal.
 */
export type LedgerWrite =
  | {
      readonly kind: 'step';
      readonly step: Extract<NewStep, { kind: 'model_request' | 'model_response' | 'note' }>;
      readonly startedMsAgo?: number;
      /** A model request's exact input: kept as its prompt snapshot (redacted, by hash). */
      readonly prompt?: PromptInput;
    }
  | {
      readonly kind: 'call';
      readonly call: ToolCall;
      readonly definition: CallDefinition;
      readonly committed: boolean;
      /** The call's declared effect, recorded begun in the same commit as the stamp. */
      readonly begins?: BegunEffect;
    }
  | {
      readonly kind: 'observed';
      readonly callStep: Pick<ToolCallStep, 'seq' | 'callId' | 'toolName'>;
      readonly result: Observation;
      readonly status: CallStatus | 'refused';
      readonly attachments?: readonly ToolAttachment[];
      /** Effects the call delivered, marked delivered in the same commit as its end. */
      readonly delivered?: readonly DeliveredEffect[];
      /** Outbound events its stamp recorded begun for a call that never ran: never sent. */
      readonly withdrawn?: readonly string[];
    }
  | {
      readonly kind: 'ran';
      readonly call: ToolCall;
      readonly definition: CallDefinition;
      readonly result: Observation;
      readonly status: CallStatus;
      readonly attachments?: readonly ToolAttachment[];
      readonly startedMsAgo: number;
      readonly delivered?: readonly DeliveredEffect[];
    }
  | {
      readonly kind: 'refused';
      readonly call: ToolCall;
      readonly definition: CallDefinition | undefined;
      readonly refusal: Observation;
    };

/** What one {@link LedgerWrite} wrote, and the observation as stored when it wrote one. */
export interface RecordedWrite {
  readonly steps: readonly StepRecord[];
  readonly observation?: Observation;
}

/** How the ledger cleans what it writes. */
export interface WriteRules {
  readonly redactor: Redactor;
  readonly observationLimitBytes: number;
  /** A call with held secrets removed from its arguments. */
  cleanCall(call: ToolCall): ToolCall;
}

/** Entries made into the store's rows (cleaned, excerpted), not yet written. */
export interface PreparedSteps {
  readonly batch: Omit<StepBatch, 'usage'>;
  /** Hands each entry back the steps it wrote, given the batch's written steps in order. */
  readonly recorded: (written: readonly StepRecord[]) => RecordedWrite[];
}

/**
 * The steps `prepared` will be once written from step `firstSeq` on, as a read would return them
 * (times are this process's): what a run's holder, the only writer of its steps, works from while
 * the write waits to go with the next one.
 */
export function provisionalSteps(
  runId: string,
  firstSeq: number,
  prepared: PreparedSteps,
): StepRecord[] {
  const now = new Date();
  return prepared.batch.steps.map(({ step, startedMsAgo }, i): StepRecord => {
    const base = {
      runId,
      seq: firstSeq + i,
      startedAt: new Date(now.getTime() - (startedMsAgo ?? 0)),
      finishedAt: now,
    };
    switch (step.kind) {
      case 'tool_call': {
        const { committed, status, package: pin, ...call } = step;
        const ended = status !== 'started';
        return {
          ...base,
          ...call,
          ...(pin ? { package: pin } : {}),
          kind: 'tool_call',
          status,
          finishedAt: ended ? now : null,
          committedAt: committed ? now : null,
        };
      }
      default:
        return { ...base, ...step, status: 'completed' };
    }
  });
}

/** The store batch for `entries`, and how to hand each entry back what it wrote. */
export function stepBatch(rules: WriteRules, entries: readonly LedgerWrite[]): PreparedSteps {
  const writes: StepWrite[] = [];
  const finish: { seq: number; status: CallStatus | 'refused' }[] = [];
  const delivered: DeliveredEffect[] = [];
  const begun: { at: number; effect: BegunEffect }[] = [];
  const withdrawn: string[] = [];
  const shapes: { first: number; count: number; observation?: Observation }[] = [];
  const add = (observation: Observation | undefined, ...steps: StepWrite[]) => {
    shapes.push({
      first: writes.length,
      count: steps.length,
      ...(observation ? { observation } : {}),
    });
    writes.push(...steps);
  };
  for (const entry of entries) {
    switch (entry.kind) {
      case 'step': {
        const snapshot = entry.prompt && snapshotParts(entry.prompt, rules.redactor);
        const data = rules.redactor.json(entry.step.data);
        add(undefined, {
          step: {
            ...entry.step,
            data: snapshot ? { ...data, prompt: { ...snapshot.ref } } : data,
          },
          ...(entry.startedMsAgo === undefined ? {} : { startedMsAgo: entry.startedMsAgo }),
          ...(snapshot ? { prompt: snapshot.parts } : {}),
        });
        break;
      }
      case 'call':
        if (entry.begins) begun.push({ at: writes.length, effect: entry.begins });
        add(undefined, {
          step: callStep(rules.cleanCall(entry.call), entry.definition, entry.committed),
        });
        break;
      case 'refused': {
        const clean = rules.cleanCall(entry.call);
        const stored = redactedObservation(rules.redactor, entry.refusal);
        add(
          stored,
          { step: refusedCallStep(clean, entry.definition) },
          { step: observationStep(clean.id, clean.name, stored) },
        );
        break;
      }
      case 'observed': {
        const prepared = preparedObservation(rules, entry.result, entry.attachments ?? []);
        finish.push({ seq: entry.callStep.seq, status: entry.status });
        delivered.push(...(entry.delivered ?? []));
        withdrawn.push(...(entry.withdrawn ?? []));
        add(prepared.stored, {
          step: observationStep(entry.callStep.callId, entry.callStep.toolName, prepared.stored),
          artifacts: prepared.artifacts,
        });
        break;
      }
      case 'ran': {
        const clean = rules.cleanCall(entry.call);
        const prepared = preparedObservation(rules, entry.result, entry.attachments ?? []);
        delivered.push(...(entry.delivered ?? []));
        add(
          prepared.stored,
          {
            step: callStep(clean, entry.definition, false, entry.status),
            startedMsAgo: entry.startedMsAgo,
          },
          {
            step: observationStep(clean.id, clean.name, prepared.stored),
            artifacts: prepared.artifacts,
          },
        );
        break;
      }
      default: {
        const never: never = entry;
        throw new TypeError(`unknown ledger write ${String(never)}`);
      }
    }
  }
  return {
    batch: {
      steps: writes,
      ...(finish.length > 0 ? { finish } : {}),
      ...(delivered.length > 0 ? { delivered } : {}),
      ...(begun.length > 0 ? { begun } : {}),
      ...(withdrawn.length > 0 ? { withdrawn } : {}),
    },
    recorded: (written) =>
      shapes.map((shape) => ({
        steps: written.slice(shape.first, shape.first + shape.count),
        ...(shape.observation ? { observation: shape.observation } : {}),
      })),
  };
}

/**
 * Prepared batches as one store batch, in order: a round's ends held back with the next request.
 * Each batch numbers its begun stamps within itself; they are offset by the steps before.
 */
export function mergedBatch(prepared: readonly PreparedSteps[]): Omit<StepBatch, 'usage'> {
  const delivered = prepared.flatMap((p) => p.batch.delivered ?? []);
  const withdrawn = prepared.flatMap((p) => p.batch.withdrawn ?? []);
  let offset = 0;
  const begun = prepared.flatMap((p) => {
    const own = (p.batch.begun ?? []).map((b) => ({ ...b, at: b.at + offset }));
    offset += p.batch.steps.length;
    return own;
  });
  return {
    steps: prepared.flatMap((p) => p.batch.steps),
    finish: prepared.flatMap((p) => p.batch.finish ?? []),
    ...(delivered.length > 0 ? { delivered } : {}),
    ...(begun.length > 0 ? { begun } : {}),
    ...(withdrawn.length > 0 ? { withdrawn } : {}),
  };
}

/**
 * A result as stored (linked, cleaned, excerpted when large) and the artifacts it needs: an
 * observation larger than the limit is stored whole as an artifact, and the step keeps its head
 * and tail and the artifact id; the bytes a call returned are artifacts of the same step.
 */
function preparedObservation(
  rules: WriteRules,
  result: Observation,
  attachments: readonly ToolAttachment[],
): { stored: Observation; artifacts: NewArtifact[] } {
  const linked = attachmentArtifacts(result, attachments, rules.redactor);
  const clean = redactedObservation(rules.redactor, linked.observation);
  const large = largeObservation(clean, rules.observationLimitBytes);
  return {
    stored: large?.observation ?? clean,
    artifacts: [...linked.artifacts, ...(large ? [large.artifact] : [])],
  };
}

/** The step of a call refused before it ran (no class when it named no known tool). */
function refusedCallStep(call: ToolCall, definition: CallDefinition | undefined): NewStep {
  return {
    kind: 'tool_call',
    status: 'refused',
    toolName: call.name,
    callId: call.id,
    effect: definition ? { class: definition.class, replay: definition.replay } : null,
    ...pinOf(definition),
    arguments: call.arguments,
    committed: false,
  };
}

function observationStep(callId: string, toolName: string, stored: Observation): NewStep {
  return { kind: 'observation', toolName, callId, observation: observationJson(stored) };
}
