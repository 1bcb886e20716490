import type { RunRecord } from './records.ts';
import { TERMINAL_STATUSES } from './records.ts';
import type { Worker } from './worker.ts';

/** How often a waiter reads a run it has no word of (a run another replica drives). */
export const SETTLE_POLL_MS = 250;

/** A run that is neither queued nor running (nor waiting for a holder): it has stopped. */
export function isSettled(run: RunRecord): boolean {
  return TERMINAL_STATUSES.includes(run.status) || run.status === 'awaiting_input';
}

/**
 * This process's side of the run queue: the worker that drives queued runs here, and the callers
 * waiting for runs to settle. A queued run is a row, so any replica's worker may take it; a run
 * this process finishes wakes its waiters at once, and one finished elsewhere is seen by reading
 * it every {@link SETTLE_POLL_MS}.
 */
export class RunQueue {
  #worker: Worker | undefined;
  readonly #waiters = new Map<string, Set<() => void>>();

  constructor(
    /** Reads a run's row (the ledger's `run`). */
    private readonly read: (runId: string) => Promise<RunRecord | undefined>,
    private readonly pollMs = SETTLE_POLL_MS,
  ) {}

  /** The worker driving queued runs in this process, once one is attached. */
  get worker(): Worker | undefined {
    return this.#worker;
  }

  /** Makes `worker` the one this process's queued runs wake, starting it. Returns it. */
  attach(worker: Worker): Worker {
    if (this.#worker && this.#worker !== worker)
      throw new Error('this Mesh already has a run worker');
    this.#worker = worker;
    worker.start();
    return worker;
  }

  /** A run was queued: this process's worker looks for work now instead of at its next poll. */
  queued(): void {
    this.#worker?.wake();
  }

  /** A run ended in this process (the ledger's `onRunEnded`): its waiters read it now. */
  ended(runId: string): void {
    const waiting = this.#waiters.get(runId);
    if (!waiting) return;
    this.#waiters.delete(runId);
    for (const wake of waiting) wake();
  }

  /**
   * The run once it has settled (succeeded, failed, interrupted, out of budget, or waiting for
   * input), or its row as it stands when `waitMs` runs out first, or when `signal` aborts.
   * Undefined when no run has that id.
   */
  async settled(
    runId: string,
    waitMs: number,
    signal?: AbortSignal,
  ): Promise<RunRecord | undefined> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      const run = await this.read(runId);
      if (!run || isSettled(run)) return run;
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return run;
      await this.#pause(runId, Math.min(left, this.pollMs), signal);
    }
  }

  /** Waits `ms`, or less when the run ends here or `signal` aborts. */
  #pause(runId: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return new Promise((resolve) => {
      let waiting = this.#waiters.get(runId);
      if (!waiting) this.#waiters.set(runId, (waiting = new Set()));
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        const set = this.#waiters.get(runId);
        set?.delete(done);
        if (set?.size === 0) this.#waiters.delete(runId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      waiting.add(done);
    });
  }

  /** Stops the attached worker (its runs in flight are given back for another to resume). */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.stop();
  }
}
