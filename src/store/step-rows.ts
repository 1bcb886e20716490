import type { JsonObject } from '../model/json.ts';
import type {
  NewStep,
  PackagePin,
  ReplyEnd,
  StepKind,
  StepRecord,
  StepStatus,
} from '../run/records.ts';
import { REPLAYS, TOOL_CLASSES, type Replay, type ToolClass } from '../tool/definition.ts';
import { StoreError } from './db.ts';

/** How a run step is a row of run_steps, and back: the columns, the parameters, the decoding. */

/** A run_steps row as selected: one column per field of every kind. */
export interface StepRow {
  readonly runId: string;
  readonly seq: number;
  readonly kind: StepKind;
  readonly toolName: string | null;
  readonly callId: string | null;
  readonly class: string | null;
  readonly replay: string | null;
  readonly arguments: string | null;
  readonly observation: JsonObject | null;
  readonly data: JsonObject | null;
  readonly status: StepStatus;
  readonly committedAt: Date | null;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
}

function effectOf(row: StepRow): { class: ToolClass; replay: Replay } | null {
  const cls = TOOL_CLASSES.find((c) => c === row.class);
  const replay = REPLAYS.find((r) => r === row.replay);
  return cls && replay ? { class: cls, replay } : null;
}

/** A reply's recorded run end, when it is one. */
function replyEnd(value: unknown): ReplyEnd | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const { status, reason } = value as Record<string, unknown>;
  if ((status !== 'budget_exhausted' && status !== 'failed') || typeof reason !== 'string')
    return undefined;
  return { status, reason };
}

/** A call step's package pin, from its data. */
function pinOf(data: JsonObject | null): { package?: PackagePin } {
  const pin = data?.['package'];
  if (typeof pin !== 'object' || pin === null || Array.isArray(pin)) return {};
  const { id, version, digest } = pin as Record<string, unknown>;
  return typeof id === 'string' && typeof version === 'string' && typeof digest === 'string'
    ? { package: { id, version, digest } }
    : {};
}

/** A row as the step record of its kind, with only that kind's fields. */
export function stepFrom(row: StepRow): StepRecord {
  const base = {
    runId: row.runId,
    seq: row.seq,
    status: row.status,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
  };
  switch (row.kind) {
    case 'model_request':
    case 'model_response':
    case 'note':
      return { ...base, kind: row.kind, data: row.data ?? {} };
    case 'reply': {
      const data = row.data ?? {};
      const end = replyEnd(data['end']);
      return {
        ...base,
        kind: 'reply',
        data: {
          messageId: typeof data['messageId'] === 'string' ? data['messageId'] : '',
          body: typeof data['body'] === 'string' ? data['body'] : '',
          ...(end ? { end } : {}),
        },
      };
    }
    case 'tool_call':
      return {
        ...base,
        kind: 'tool_call',
        toolName: row.toolName ?? '',
        callId: row.callId ?? '',
        effect: effectOf(row),
        ...pinOf(row.data),
        arguments: row.arguments ?? '',
        committedAt: row.committedAt,
      };
    case 'observation':
      return {
        ...base,
        kind: 'observation',
        toolName: row.toolName ?? '',
        callId: row.callId ?? '',
        observation: row.observation ?? {},
      };
    default: {
      const never: never = row.kind;
      throw new StoreError('database_error', `unknown step kind ${String(never)}`);
    }
  }
}

export const STEP_COLUMNS = `run_id as "runId", seq, kind, tool_name as "toolName", call_id as "callId", class, replay,
  arguments, observation, data, status, committed_at as "committedAt", started_at as "startedAt",
  finished_at as "finishedAt"`;

/** A new step's column values, as stored: its row's, and whether it is committed and ended. */
type StepColumns = Pick<
  StepRow,
  'toolName' | 'callId' | 'class' | 'replay' | 'arguments' | 'observation' | 'data' | 'status'
> & { readonly committed: boolean; readonly finished: boolean };

/** The column values of a new step, in the order of {@link STEP_INSERT_COLUMNS} after run and seq. */
export function stepParams(step: NewStep): unknown[] {
  const cols = stepColumns(step);
  return [
    step.kind,
    cols.toolName,
    cols.callId,
    cols.class,
    cols.replay,
    cols.arguments,
    cols.observation === null ? null : JSON.stringify(cols.observation),
    cols.data === null ? null : JSON.stringify(cols.data),
    cols.status,
    cols.committed,
    cols.finished,
  ];
}

/** What the store itself decided for a written step: its number and its times. */
export const WRITTEN_COLUMNS = `seq, committed_at as "committedAt", started_at as "startedAt",
  finished_at as "finishedAt"`;

/** What {@link WRITTEN_COLUMNS} selects. */
export type WrittenRow = Pick<StepRow, 'seq' | 'committedAt' | 'startedAt' | 'finishedAt'>;

/**
 * A step as written: what was sent, with the number and times the store gave it. The same record
 * a read returns, without sending the step's JSON back and parsing it again.
 */
export function writtenStep(runId: string, step: NewStep, written: WrittenRow): StepRecord {
  const cols = stepColumns(step);
  return stepFrom({
    runId,
    kind: step.kind,
    toolName: cols.toolName,
    callId: cols.callId,
    class: cols.class,
    replay: cols.replay,
    arguments: cols.arguments,
    observation: cols.observation,
    data: cols.data,
    status: cols.status,
    ...written,
  });
}

function stepColumns(step: NewStep): StepColumns {
  const none = { toolName: null, callId: null, class: null, replay: null, arguments: null };
  return ((): StepColumns => {
    switch (step.kind) {
      case 'model_request':
      case 'model_response':
      case 'note':
        return {
          ...none,
          observation: null,
          data: step.data,
          status: 'completed',
          committed: false,
          finished: true,
        };
      case 'reply':
        return {
          ...none,
          observation: null,
          data: {
            messageId: step.data.messageId,
            body: step.data.body,
            ...(step.data.end ? { end: { ...step.data.end } } : {}),
          },
          status: 'completed',
          committed: false,
          finished: true,
        };
      case 'tool_call':
        return {
          toolName: step.toolName,
          callId: step.callId,
          class: step.effect?.class ?? null,
          replay: step.effect?.replay ?? null,
          arguments: step.arguments,
          observation: null,
          // The package pin rides in the call step's data.
          data: step.package ? { package: { ...step.package } } : null,
          status: step.status,
          committed: step.committed,
          finished: step.status !== 'started',
        };
      case 'observation':
        return {
          ...none,
          toolName: step.toolName,
          callId: step.callId,
          observation: step.observation,
          data: null,
          status: 'completed',
          committed: false,
          finished: true,
        };
      default: {
        const never: never = step;
        throw new StoreError('database_error', `unknown step ${JSON.stringify(never)}`);
      }
    }
  })();
}

/** The column list and the placeholders (from `$first`) of {@link stepParams}. */
export function stepValues(first: number): string {
  const p = (i: number) => `$${first + i}`;
  return `${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}::jsonb, ${p(7)}::jsonb, ${p(8)},
    case when ${p(9)}::boolean then now() else null end, case when ${p(10)}::boolean then now() else null end`;
}

export const STEP_INSERT_COLUMNS = `(run_id, seq, kind, tool_name, call_id, class, replay, arguments, observation, data, status,
  committed_at, finished_at)`;

/**
 * {@link STEP_INSERT_COLUMNS} as an append writes them: with the step's start given (a call
 * recorded after it ran) and the run's usage as of the step.
 */
export const STEP_INSERT_COLUMNS_APPENDED = `(run_id, seq, kind, tool_name, call_id, class, replay, arguments, observation, data, status,
  committed_at, finished_at, started_at, usage)`;
