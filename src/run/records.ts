import type { JsonObject } from '../model/json.ts';
import type { Audience } from '../policy/audience.ts';
import type { Replay, ToolClass } from '../tool/definition.ts';

/*
 * The run layer's vocabulary: runs, their steps, leases, artifacts, and the conversation records a
 * turn reads and writes. src/store implements these; nothing here knows SQL.
 */

/** Where a run is in its life. */
export type RunStatus =
  | 'queued'
  | 'running'
  | 'awaiting_input'
  | 'succeeded'
  | 'failed'
  | 'interrupted'
  | 'budget_exhausted';

/** The statuses a run never leaves. */
export const TERMINAL_STATUSES: readonly RunStatus[] = Object.freeze([
  'succeeded',
  'failed',
  'budget_exhausted',
]);

/** A durable run. JSON columns are as the driver parsed them. */
export interface RunRecord {
  readonly id: string;
  readonly agentId: string;
  readonly conversationId: string | null;
  readonly inboundMessageId: string | null;
  readonly kind: string;
  readonly status: RunStatus;
  readonly reason: string | null;
  readonly provenance: JsonObject;
  readonly budget: JsonObject;
  readonly usage: JsonObject;
  readonly checkpoint: JsonObject;
  readonly leaseOwner: string | null;
  readonly leaseEpoch: number;
  readonly leaseExpiresAt: Date | null;
  /** How many times a holder let go of the run before it ended (died, stopped, lease taken back). */
  readonly interruptions: number;
  readonly committedAt: Date | null;
  readonly createdAt: Date;
  readonly startedAt: Date | null;
  readonly finishedAt: Date | null;
}

/** What a run still held when it ended: a live workspace, a live browser session. */
export interface HeldAtEnd {
  readonly workspace: boolean;
  readonly browser: boolean;
}

/** Proof that a worker holds a run: every write is fenced by it. */
export interface Lease {
  readonly runId: string;
  readonly owner: string;
  readonly epoch: number;
}

/**
 * The text a model has written so far for a run's round while its call streams: what live views
 * show before the response is a step. `attempt` is the call's attempt; a retry starts again.
 */
export interface RunDraft {
  readonly round: number;
  readonly attempt: number;
  readonly body: string;
}

/** What a step records. */
export type StepKind = StepRecord['kind'];
export type StepStatus = 'started' | 'completed' | 'refused' | 'failed' | 'unknown';

/** Every step kind, in the order a turn writes them. */
export const STEP_KINDS: readonly StepKind[] = Object.freeze([
  'model_request',
  'model_response',
  'tool_call',
  'observation',
  'reply',
  'note',
]);

interface StepBase {
  readonly runId: string;
  readonly seq: number;
  readonly status: StepStatus;
  readonly startedAt: Date;
  readonly finishedAt: Date | null;
}

/** A request about to be sent to the model: round, estimate, what was offered and withheld. */
export interface ModelRequestStep extends StepBase {
  readonly kind: 'model_request';
  readonly data: JsonObject;
}

/** The model's answer: content, the tool calls it asked for, usage. */
export interface ModelResponseStep extends StepBase {
  readonly kind: 'model_response';
  readonly data: JsonObject;
}

/**
 * The package a call's tool was declared by, pinned exactly: its id, version and content digest
 * (a remote server's tools: the server's id and the digest of the checked definition).
 */
export interface PackagePin {
  readonly id: string;
  readonly version: string;
  readonly digest: string;
}

/**
 * A tool call, recorded before it runs. `effect` is the class and replay the call ran under (what
 * resume decides by); it is null only for a refused call naming no known tool.
 */
export interface ToolCallStep extends StepBase {
  readonly kind: 'tool_call';
  readonly toolName: string;
  readonly callId: string;
  readonly effect: { readonly class: ToolClass; readonly replay: Replay } | null;
  /** The exact package the tool came from (absent for a call naming no known tool). */
  readonly package?: PackagePin;
  readonly arguments: string;
  /** The write-ahead commit stamp, for a call that crossed the commit boundary. */
  readonly committedAt: Date | null;
}

/** What a call came to, as the model saw it. */
export interface ObservationStep extends StepBase {
  readonly kind: 'observation';
  readonly toolName: string;
  readonly callId: string;
  readonly observation: JsonObject;
}

/**
 * How a run that replied ended, when not in success: the reply told the conversation why (a
 * budget ran out, a question expired), and a resumed run ends the same way.
 */
export interface ReplyEnd {
  readonly status: 'budget_exhausted' | 'failed';
  readonly reason: string;
}

/** The reply written to the conversation. */
export interface ReplyStep extends StepBase {
  readonly kind: 'reply';
  readonly data: { readonly messageId: string; readonly body: string; readonly end?: ReplyEnd };
}

/** Anything else worth keeping in the run's record. */
export interface NoteStep extends StepBase {
  readonly kind: 'note';
  readonly data: JsonObject;
}

/** One step of a run, discriminated by `kind`: each kind carries exactly its own fields. */
export type StepRecord =
  ModelRequestStep | ModelResponseStep | ToolCallStep | ObservationStep | ReplyStep | NoteStep;

/** A step to append: a step record without what the store assigns. */
export type NewStep =
  | { readonly kind: 'model_request' | 'model_response' | 'note'; readonly data: JsonObject }
  | { readonly kind: 'reply'; readonly data: ReplyStep['data'] }
  | {
      readonly kind: 'tool_call';
      /** `started` when written ahead of the call; its end when written after it ran. */
      readonly status: 'started' | 'refused' | CallStatus;
      readonly toolName: string;
      readonly callId: string;
      readonly effect: ToolCallStep['effect'];
      readonly package?: PackagePin;
      readonly arguments: string;
      /** Stamps the call (and its run) as having crossed the commit boundary. */
      readonly committed: boolean;
    }
  | {
      readonly kind: 'observation';
      readonly toolName: string;
      readonly callId: string;
      readonly observation: JsonObject;
    };

/** How a call step ends when its observation is written. */
export type CallStatus = 'completed' | 'unknown' | 'failed';

/** A run to create. */
export interface NewRun {
  readonly id: string;
  readonly agentId: string;
  readonly conversationId?: string | null;
  readonly inboundMessageId?: string | null;
  readonly kind: string;
  readonly provenance: JsonObject;
  readonly budget: JsonObject;
  readonly checkpoint?: JsonObject;
  /** When given, the run is created running and leased to this owner. */
  readonly lease?: { readonly owner: string; readonly leaseMs: number };
}

/** A large observation kept whole beside its step. */
export interface ArtifactRecord {
  readonly id: string;
  readonly runId: string;
  readonly stepSeq: number | null;
  readonly mediaType: string;
  readonly sizeBytes: number;
  readonly sha256: string;
  readonly content: Uint8Array;
}

/** An artifact to store with the step that refers to it (the store assigns run and step). */
export interface NewArtifact {
  readonly id: string;
  readonly mediaType: string;
  readonly content: Uint8Array;
  readonly sha256: string;
}

/** The agent a run acts for: its name and persona, and the model it talks to. */
export interface AgentRecord {
  readonly id: string;
  readonly name: string;
  readonly persona: string | null;
  readonly modelProviderId: string | null;
  readonly model: string | null;
  /** The model accepts image input: images tools returned are shown to it (off by default). */
  readonly modelImageInput: boolean;
  /**
   * The agent's budget profile: the meters an operator set (`Budget` fields); a meter left out is
   * the default. Runs copy it when they are created.
   */
  readonly budget: JsonObject;
  readonly createdAt: Date;
}

/** A conversation: the agent it is with and its audience. */
export interface ConversationRecord {
  readonly id: string;
  readonly agentId: string;
  readonly audience: Audience;
  readonly title: string | null;
  readonly createdAt: Date;
}

/** A message in a conversation, inbound (with its actor) or the agent's reply. */
export interface MessageRecord {
  readonly id: string;
  readonly conversationId: string;
  readonly direction: 'inbound' | 'outbound';
  readonly actor: string;
  /** Who posted it for `actor` (a relay token's actor), when that was not `actor` itself. */
  readonly relayedBy: string | null;
  readonly body: string;
  readonly createdAt: Date;
}
