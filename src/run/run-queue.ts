import type { RunRecord } from './records.ts';
import { TERMINAL_STATUSES } from './records.ts';
import type { Worker } from './worker.ts';

/**
 * How soon a waiter first reads its run again; each later read waits twice as long, up to a
 * bound. A run ended in this process wakes its waiters at once, and one ended elsewhere is
 * announced (PostgreSQL's NOTIFY), so the reads are a safety net: {@link SETTLE_POLL_MAX_MS}
 * while ends are announced (or none can happen elsewhere), {@link SETTLE_POLL_UNANNOUNCED_MS}
 * while the announcements are not heard. bench:tenants' 500 waiters reading their runs every
 * 250 ms took a third of its throughput.
 */
export const SETTLE_POLL_MS = 250;
export const SETTLE_POLL_MAX_MS = 30_000;
export const SETTLE_POLL_UNANNOUNCED_MS = 2000;

/**
 * Hears run ends announced by other processes: calls `ended` with each run id, `lost` when it can
 * no longer hear them. Resolves with the way to stop.
 */
export type RunEndSubscription = (
  ended: (runId: string) => void,
  lost: () => void,
) => Promise<() => Promise<void>>;

/** A watch on one run, taken before reading it: see {@link RunQueue.watch}. */
export interface ChangeWatch {
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  /** Stops watching without waiting (the view ended). */
  stop(): void;
}

/** A run that is neither queued nor running (nor waiting for a holder): it has stopped. */
export function isSettled(run: RunRecord): boolean {
  return TERMINAL_STATUSES.includes(run.status) || run.status === 'awaiting_input';
}

/**
 * This process's side of the run queue: the worker that drives queued runs here, and the callers
 * waiting for runs to settle. A queued run is a row, so any replica's worker may take it; a run
 * this process finishes wakes its waiters at once, and one finished elsewhere is seen by reading
 * it again, less and less often (see {@link SETTLE_POLL_MS}).
 */
export class RunQueue {
  #worker: Worker | undefined;
  readonly #waiters = new Map<string, Set<() => void>>();
  readonly #watchers = new Map<string, Set<() => void>>();

  /** Whether ends elsewhere are heard now (or cannot happen): how long a waiter may sleep. */
  #announced: boolean;
  #subscription: Promise<(() => Promise<void>) | undefined> | undefined;

  constructor(
    /** Reads a run's row (the ledger's `run`). */
    private readonly read: (runId: string) => Promise<RunRecord | undefined>,
    private readonly pollMs = SETTLE_POLL_MS,
    /**
     * How this process hears runs end in others (a server database's notifications), started by
     * the first waiter. None where no other process can drive a run (the embedded database).
     */
    private readonly subscribe?: RunEndSubscription,
  ) {
    this.#announced = subscribe === undefined;
  }

  /** Starts hearing other processes' run ends, once; a failure leaves the shorter reads on. */
  #listen(): void {
    if (!this.subscribe || this.#subscription) return;
    this.#subscription = this.subscribe(
      (runId) => this.ended(runId),
      () => {
        this.#announced = false;
      },
    ).then(
      (stop) => {
        this.#announced = true;
        return stop;
      },
      () => undefined,
    );
  }

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

  /** A run changed in this process (the ledger's `onRunChanged`): its watchers look now. */
  touched(runId: string): void {
    const watching = this.#watchers.get(runId);
    if (!watching) return;
    this.#watchers.delete(runId);
    for (const wake of watching) wake();
  }

  /**
   * Starts watching for the next change this process makes to the run. Taken before a live view
   * reads the run, so a change made while it reads is not missed: `wait` then resolves at once;
   * otherwise at the change, after `ms`, or when `signal` aborts (a change made elsewhere is seen
   * at the view's next read).
   */
  watch(runId: string): ChangeWatch {
    let changed = false;
    let wake: (() => void) | undefined;
    const seen = (): void => {
      changed = true;
      wake?.();
    };
    let watching = this.#watchers.get(runId);
    if (!watching) this.#watchers.set(runId, (watching = new Set()));
    watching.add(seen);
    const stop = (): void => {
      const set = this.#watchers.get(runId);
      set?.delete(seen);
      if (set?.size === 0) this.#watchers.delete(runId);
    };
    return {
      stop,
      wait: (ms, signal) =>
        new Promise((resolve) => {
          if (changed || signal?.aborted) {
            stop();
            return resolve();
          }
          const done = (): void => {
            clearTimeout(timer);
            signal?.removeEventListener('abort', done);
            stop();
            resolve();
          };
          wake = done;
          const timer = setTimeout(done, ms);
          signal?.addEventListener('abort', done, { once: true });
        }),
    };
  }

  /** Resolves at the next change this process makes to the run, or after `ms`, or on abort. */
  nextChange(runId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return this.watch(runId).wait(ms, signal);
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
    let pollMs = this.pollMs;
    this.#listen();
    for (;;) {
      const run = await this.read(runId);
      if (!run || isSettled(run)) return run;
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted) return run;
      await this.#pause(runId, Math.min(left, pollMs), signal);
      const bound = this.#announced ? SETTLE_POLL_MAX_MS : SETTLE_POLL_UNANNOUNCED_MS;
      pollMs = Math.min(pollMs * 2, Math.max(this.pollMs, bound));
    }
  }

  /** Waits `ms`, or less when the run ends here or `signal` aborts. */
  #pause(runId: string, ms: number, signal: AbortSignal | undefined): Promise<void> {
    return wait(this.#waiters, runId, ms, signal);
  }

  /** Whether other processes' run ends are heard, once the first waiter has asked to hear them. */
  async listening(): Promise<boolean> {
    return (await this.#subscription) !== undefined;
  }

  /** Stops the attached worker (its runs in flight are given back for another to resume). */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    await worker?.stop();
    const stop = await this.#subscription;
    this.#subscription = undefined;
    await stop?.();
  }
}

/** Waits `ms`, or less when `runId`'s entry in `table` is woken or `signal` aborts. */
function wait(
  table: Map<string, Set<() => void>>,
  runId: string,
  ms: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    let waiting = table.get(runId);
    if (!waiting) table.set(runId, (waiting = new Set()));
    const done = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      const set = table.get(runId);
      set?.delete(done);
      if (set?.size === 0) table.delete(runId);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    waiting.add(done);
  });
}
