import type { Lease, RunRecord, RunStatus } from './records.ts';
import type { RunLedger } from './ledger.ts';

/**
 * How a driven run ended. `awaiting_input` means the driver parked the run itself (one write put
 * it in awaiting_input and gave up its lease): the caller finishes nothing. `interrupted` means
 * the work stopped and the run goes back to the queue.
 */
export interface RunEnd {
  readonly status: Extract<
    RunStatus,
    'succeeded' | 'failed' | 'budget_exhausted' | 'awaiting_input' | 'interrupted'
  >;
  readonly reason: string | null;
}

/** What a driver is handed: the claimed run, the lease every write is fenced by, the ledger. */
export interface DriveContext {
  readonly run: RunRecord;
  readonly lease: Lease;
  readonly ledger: RunLedger;
  /** Aborted when the lease is lost or the worker stops: the driver must stop writing. */
  readonly signal: AbortSignal;
}

/**
 * Drives one kind of run (a conversation turn, a scripted run, an operator's call) from its
 * persisted state to an end. It must be resumable: given a run some steps of which are already
 * recorded, it continues without repeating them.
 */
export interface RunDriver {
  readonly kind: string;
  drive(ctx: DriveContext): Promise<RunEnd>;
  /**
   * Tells whoever waits on the run that it will not be resumed (`reason` says why), before the
   * worker ends it failed: a turn tells its conversation. Only the run's own records are read
   * here, never the code that was running when its holders were lost.
   */
  giveUp?(ctx: DriveContext, reason: string): Promise<void>;
}
