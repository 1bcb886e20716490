import { createHash, randomUUID } from 'node:crypto';
import type { JsonObject, JsonValue } from '../model/json.ts';
import type { ToolCall } from '../model/wire.ts';
import type { Definition } from '../tool/definition.ts';
import { toolEffect } from '../tool/effect.ts';
import {
  artifactId,
  observation as makeObservation,
  type Observation,
} from '../tool/observation.ts';
import type { Db, Queryable } from '../store/db.ts';
import {
  appendObservation,
  appendStep,
  appendStepPair,
  finishRun,
  finishStep,
  getRun,
  insertArtifact,
  insertRun,
  insertStep,
  listSteps,
  reserveSeq,
  updateProgress,
  type Lease,
  type NewRun,
  type NewStep,
  type RunRecord,
  type RunStatus,
  type StepRecord,
} from '../store/runs.ts';
import { excerpt } from './excerpt.ts';

export interface LedgerOptions {
  /** Observations larger than this many bytes are stored as artifacts and excerpted. */
  readonly observationLimitBytes?: number;
}

export const DEFAULT_OBSERVATION_LIMIT = 16 * 1024;

/**
 * The durable record of a run, step by step. Every write is fenced by the caller's lease, so a
 * worker that lost its run can neither add steps nor cross a commit boundary.
 */
export class RunLedger {
  readonly db: Db;
  readonly observationLimitBytes: number;

  constructor(db: Db, options: LedgerOptions = {}) {
    this.db = db;
    this.observationLimitBytes = options.observationLimitBytes ?? DEFAULT_OBSERVATION_LIMIT;
  }

  /** Creates a run, queued for a worker or (with `lease`) running under the caller's lease. */
  async createRun(
    run: Omit<NewRun, 'id'> & { id?: string },
    q: Queryable = this.db,
  ): Promise<RunRecord> {
    return insertRun(q, { ...run, id: run.id ?? randomUUID() });
  }

  async run(runId: string): Promise<RunRecord | undefined> {
    return getRun(this.db, runId);
  }

  async steps(runId: string): Promise<StepRecord[]> {
    return listSteps(this.db, runId);
  }

  /** Appends one step. */
  async appendStep(lease: Lease, step: NewStep): Promise<StepRecord> {
    return appendStep(this.db, lease, step);
  }

  /**
   * Records a tool call before it runs. For a call that crosses the commit boundary this is the
   * write-ahead stamp: the step and the run's `committed_at` are written in one statement (one
   * transaction), and the call may run only after it commits.
   */
  async recordToolCall(
    lease: Lease,
    call: ToolCall,
    definition: Pick<Definition, 'class' | 'replay'>,
  ): Promise<StepRecord> {
    return toolEffect(definition).crossesCommitBoundary
      ? this.recordCommit(lease, call, definition)
      : appendStep(this.db, lease, callStep(call, definition, false));
  }

  /** The write-ahead commit stamp of an effectful call (see {@link recordToolCall}). */
  async recordCommit(
    lease: Lease,
    call: ToolCall,
    definition: Pick<Definition, 'class' | 'replay'>,
  ): Promise<StepRecord> {
    return appendStep(this.db, lease, callStep(call, definition, true), true);
  }

  /**
   * Records a call the executor refused before it ran (unknown tool, invalid arguments): the call
   * step and its observation, together.
   */
  async recordRefusal(
    lease: Lease,
    call: ToolCall,
    definition: Pick<Definition, 'class' | 'replay'> | undefined,
    refusal: Observation,
  ): Promise<{ call: StepRecord; observation: StepRecord }> {
    const [first, second] = await appendStepPair(
      this.db,
      lease,
      {
        kind: 'tool_call',
        status: 'refused',
        toolName: call.name,
        callId: call.id,
        ...(definition ? { class: definition.class, replay: definition.replay } : {}),
        arguments: call.arguments,
        finished: true,
      },
      {
        kind: 'observation',
        status: 'completed',
        toolName: call.name,
        callId: call.id,
        observation: observationJson(refusal),
        finished: true,
      },
    );
    return { call: first, observation: second };
  }

  /**
   * Records a call's observation and completes its call step, together. An observation larger
   * than the limit is stored whole as an artifact; the step keeps its head and tail and the
   * artifact id.
   */
  async recordObservation(
    lease: Lease,
    callStep: Pick<StepRecord, 'seq' | 'callId' | 'toolName'>,
    result: Observation,
    callStatus: 'completed' | 'unknown' | 'failed' = 'completed',
  ): Promise<{ step: StepRecord; observation: Observation }> {
    const step = (o: Observation): NewStep => ({
      kind: 'observation',
      status: 'completed',
      ...(callStep.toolName === null ? {} : { toolName: callStep.toolName }),
      ...(callStep.callId === null ? {} : { callId: callStep.callId }),
      observation: observationJson(o),
      finished: true,
    });
    if (observationBytes(result) <= this.observationLimitBytes) {
      return {
        step: await appendObservation(this.db, lease, callStep.seq, callStatus, step(result)),
        observation: result,
      };
    }
    return this.db.transaction(async (tx) => {
      const seq = await reserveSeq(tx, lease);
      const stored = await this.storeLarge(tx, lease.runId, seq, result);
      const recorded = await insertStep(tx, lease.runId, seq, step(stored));
      await finishStep(tx, lease.runId, callStep.seq, callStatus);
      return { step: recorded, observation: stored };
    });
  }

  private async storeLarge(
    tx: Queryable,
    runId: string,
    seq: number,
    result: Observation,
  ): Promise<Observation> {
    const whole =
      result.data === undefined
        ? result.text
        : JSON.stringify({ text: result.text, data: result.data });
    const bytes = Buffer.from(whole, 'utf8');
    if (bytes.length <= this.observationLimitBytes) return result;
    const id = randomUUID();
    await insertArtifact(tx, {
      id,
      runId,
      stepSeq: seq,
      mediaType: result.data === undefined ? 'text/plain; charset=utf-8' : 'application/json',
      content: bytes,
      sha256: createHash('sha256').update(bytes).digest('hex'),
    });
    const cut = excerpt(result.text, this.observationLimitBytes, id);
    return makeObservation({
      kind: result.kind,
      text: cut.text,
      truncated: {
        artifactId: artifactId(id),
        totalBytes: bytes.length,
        shownBytes: cut.shownBytes,
      },
    });
  }

  /** Saves the run's usage counters and, optionally, its checkpoint. */
  async progress(
    lease: Lease,
    progress: { usage?: JsonObject; checkpoint?: JsonObject },
  ): Promise<void> {
    await updateProgress(this.db, lease, progress);
  }

  /** Ends the run with a status and a reason. */
  async finish(lease: Lease, status: RunStatus, reason: string | null): Promise<void> {
    await finishRun(this.db, lease, status, reason);
  }
}

function callStep(
  call: ToolCall,
  definition: Pick<Definition, 'class' | 'replay'>,
  committed: boolean,
): NewStep {
  return {
    kind: 'tool_call',
    status: 'started',
    toolName: call.name,
    callId: call.id,
    class: definition.class,
    replay: definition.replay,
    arguments: call.arguments,
    committed,
  };
}

/** What an artifact holds for an observation: its text, or text and data as JSON. */
function wholeText(o: Observation): string {
  return o.data === undefined ? o.text : JSON.stringify({ text: o.text, data: o.data });
}

function observationBytes(o: Observation): number {
  return Buffer.byteLength(wholeText(o), 'utf8');
}

/** The JSON form of an observation as stored in a step. */
export function observationJson(o: Observation): JsonObject {
  const out: Record<string, JsonValue> = { kind: o.kind, text: o.text };
  if (o.data !== undefined) out['data'] = o.data;
  if (o.truncated) out['truncated'] = { ...o.truncated };
  return out;
}

/** Rebuilds an observation from a stored step (re-validating the truncation rule). */
export function observationFrom(json: JsonObject): Observation {
  const truncated = json['truncated'] as
    { artifactId: string; totalBytes: number; shownBytes: number } | undefined;
  return makeObservation({
    kind: json['kind'] as Observation['kind'],
    text: typeof json['text'] === 'string' ? json['text'] : '',
    ...(json['data'] === undefined ? {} : { data: json['data'] }),
    ...(truncated
      ? { truncated: { ...truncated, artifactId: artifactId(truncated.artifactId) } }
      : {}),
  });
}
