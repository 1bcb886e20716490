import type { JsonObject } from '../model/json.ts';

/** Where one effect is in its delivery. */
export type DeliveryState = 'pending' | 'delivering' | 'delivered' | 'failed' | 'unknown';

/** One effect, as recorded in `outbound_events`. */
export interface OutboundEventRecord {
  readonly id: string;
  readonly idempotencyKey: string;
  readonly runId: string;
  readonly stepSeq: number;
  readonly callId: string;
  readonly toolName: string;
  readonly kind: string;
  readonly target: string;
  readonly payload: JsonObject;
  readonly state: DeliveryState;
  readonly attempts: number;
  readonly lastError: string | null;
  readonly externalId: string | null;
  readonly link: string | null;
  readonly result: JsonObject | null;
  /** The provider can say what an attempt made (a client id, a lookup by our key). */
  readonly reconciles: boolean;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** What is recorded before an effect's first attempt. */
export type NewOutboundEvent = Pick<
  OutboundEventRecord,
  | 'id'
  | 'idempotencyKey'
  | 'runId'
  | 'stepSeq'
  | 'callId'
  | 'toolName'
  | 'kind'
  | 'target'
  | 'payload'
  | 'reconciles'
>;

/** What the provider answered for a delivered effect, as stored. */
export interface StoredReceipt {
  readonly externalId: string;
  readonly link: string | null;
  readonly result: JsonObject | null;
}

/** What recording an effect found: its row, and whether this call recorded it (and so began it). */
export interface RecordedEffect {
  readonly row: OutboundEventRecord;
  /** True when the row is new: recorded `delivering` with its first attempt begun. */
  readonly begun: boolean;
}

/**
 * The outbound machinery's storage; src/store implements it. Each write is one durable statement,
 * so the row says what was true when the process stopped: `delivering` means an attempt may be on
 * the wire.
 */
export interface OutboundStore {
  /**
   * Inserts the event with its first attempt begun (`delivering`, attempts 1: one commit before
   * the first send, not two), or returns the row already recorded under its key.
   */
  record(event: NewOutboundEvent): Promise<RecordedEffect>;
  /**
   * Marks an attempt as started (`delivering`, attempts + 1) before it is sent, only while the
   * row still has the attempts its caller read: undefined when another holder of the run began
   * one meanwhile (a lease that lapsed mid-call), so two holders never both send.
   */
  beginAttempt(id: string, attemptsRead: number): Promise<OutboundEventRecord | undefined>;
  /**
   * Marks the effect delivered with what the provider answered. Given `defer`, writes nothing:
   * `defer` is handed the receipt as it would be stored, for the call's end to write with its
   * observation.
   */
  delivered(
    id: string,
    receipt: StoredReceipt,
    defer?: (stored: StoredReceipt) => void,
  ): Promise<void>;
  /** Back to `pending` after an attempt the provider did not act on, with why. */
  retryLater(id: string, error: string): Promise<void>;
  failed(id: string, error: string): Promise<void>;
  unknown(id: string, error: string): Promise<void>;
  forRun(runId: string): Promise<readonly OutboundEventRecord[]>;
}
