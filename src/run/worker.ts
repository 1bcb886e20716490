import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { hasCode, MeshError } from '../tool/errors.ts';
import type { RunDriver } from './driver.ts';
import type { RunLedger } from './ledger.ts';
import type { Lease, RunRecord } from './records.ts';
import { describeFailure } from './tool-step.ts';
import { RUN_LEASE_MS, startLeaseHeartbeat } from './lease-heartbeat.ts';

/** The code a fenced write rejects with once its lease is lost (src/store's `LeaseLostError`). */
const LEASE_LOST = 'lease_lost';

export interface WorkerOptions {
  readonly ledger: RunLedger;
  readonly drivers: readonly RunDriver[];
  /** Identifies this worker in leases; defaults to host, pid and a random suffix. */
  readonly owner?: string;
  readonly leaseMs?: number;
  /** How many runs this worker drives at once. */
  readonly concurrency?: number;
  /** How long a worker whose last look found nothing waits before looking again (unless woken). */
  readonly pollMs?: number;
  readonly log?: (line: string) => void;
  /** Told of each run this worker takes and how it ends (the metrics set-up's). */
  readonly observer?: WorkerObserver;
  /**
   * How many times a run's holders may let go of it (a process that died or was stopped, a lease
   * taken back) before it is no longer resumed: the next claim ends it failed, with the reason
   * told to its conversation, rather than driving it into the same fault again. Default 3.
   */
  readonly maxInterruptions?: number;
}

/** The default {@link WorkerOptions.maxInterruptions}. */
export const MAX_INTERRUPTIONS = 3;

/** What a worker reports for metrics: runs taken, and runs ended here with their status. */
export interface WorkerObserver {
  /** A run was claimed; `queuedSeconds` when it was taken from the queue for the first time. */
  claimed(run: RunRecord, queuedSeconds: number | undefined): void;
  /** A run this worker drove ended with `status` (not one handed over to another holder). */
  ended(run: RunRecord, status: string, seconds: number): void;
  /** How many runs this worker drives now, after a change. */
  active(count: number): void;
}

/** A caller of {@link Worker.idle}: resolved by the first empty look that began after it asked. */
interface IdleWaiter {
  readonly afterPoll: number;
  readonly resolve: () => void;
}

/**
 * Claims runnable runs (queued, or running with an expired lease) and drives them, heartbeating
 * each lease while it works and stopping work on a run whose lease it cannot renew in time. A
 * failure in one run — a dropped connection included — ends that run as failed with the reason
 * (when the database lets us write it) and never stops the worker.
 *
 * Callers await events instead of polling the ledger: {@link Worker.idle} resolves once the worker
 * has looked for work, found none and holds no run; {@link Worker.wake} ends the wait between
 * looks, so new work is claimed (and `stop()` returns) without waiting out `pollMs`.
 */
export class Worker {
  readonly owner: string;
  private readonly options: Required<Omit<WorkerOptions, 'owner' | 'log' | 'observer'>> &
    Pick<WorkerOptions, 'log' | 'observer'>;
  private readonly active = new Map<
    string,
    { controller: AbortController; lease: Lease; done: Promise<void> }
  >();
  private stopping = false;
  private loop: Promise<void> | undefined;
  private endPause: (() => void) | undefined;
  /** Set by wake() while the loop is not pausing, so the next pause is skipped. */
  private woken = false;
  /** How many looks for work have begun. */
  private pollsStarted = 0;
  private idleWaiters: IdleWaiter[] = [];
  /** Settled by stop(), so a loop waiting for a free slot stops waiting. */
  private requestStop!: () => void;
  private readonly stopRequested = new Promise<void>((resolve) => (this.requestStop = resolve));

  constructor(options: WorkerOptions) {
    this.owner = options.owner ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.options = {
      leaseMs: RUN_LEASE_MS,
      concurrency: 4,
      pollMs: 500,
      maxInterruptions: MAX_INTERRUPTIONS,
      ...options,
    };
  }

  /** Starts claiming work in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Stops claiming, aborts runs in flight and gives their leases back. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    this.requestStop();
    // The loop ends first: a look for work already sent to the database answers before any lease
    // is given back, so it can never claim a run this worker is letting go of (and count a second
    // interruption for one stop).
    await this.loop;
    for (const { controller } of this.active.values()) controller.abort();
    await Promise.allSettled([...this.active.values()].map((a) => a.done));
    this.settleIdleWaiters(Number.POSITIVE_INFINITY);
  }

  /** Looks for work now instead of at the end of the current wait (e.g. after queueing a run). */
  wake(): void {
    this.woken = true;
    this.endPause?.();
  }

  /**
   * Resolves when a look for work that began after this call found nothing runnable and the
   * worker holds no run: everything runnable when it was called has been driven (or is leased
   * elsewhere). It does not hurry the worker: the next look comes on its own schedule (call
   * {@link wake} for sooner). A stopped worker is idle at once; one not yet started is idle only
   * after `start()`.
   */
  idle(): Promise<void> {
    if (this.stopping && this.active.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.idleWaiters.push({ afterPoll: this.pollsStarted, resolve });
    });
  }

  /** Claims and drives at most one run; resolves when it ends. Returns false when none was runnable. */
  async runOnce(): Promise<boolean> {
    const run = await this.options.ledger.claim(this.owner, this.options.leaseMs);
    if (!run) return false;
    await this.drive(run);
    return true;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      if (this.active.size >= this.options.concurrency) {
        await Promise.race([...[...this.active.values()].map((a) => a.done), this.stopRequested]);
        continue;
      }
      let run: RunRecord | undefined;
      let claimed = false;
      const poll = ++this.pollsStarted;
      this.woken = false;
      try {
        run = await this.options.ledger.claim(this.owner, this.options.leaseMs);
        claimed = true;
      } catch (error) {
        this.options.log?.(`worker ${this.owner}: could not claim work: ${describeFailure(error)}`);
      }
      if (run) {
        // drive() never rejects: every failure ends in the run's own record.
        void this.drive(run);
        continue;
      }
      // A failed look is not an empty one: idle() waits for the database to answer.
      if (claimed && this.active.size === 0) this.settleIdleWaiters(poll);
      await this.pause();
    }
  }

  /** Waits `pollMs`, or less when woken (by stop(), wake() or a run ending). */
  private async pause(): Promise<void> {
    if (this.stopping || this.woken) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, this.options.pollMs);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.endPause = done;
    });
    this.endPause = undefined;
  }

  /** Resolves every idle() caller whose call came before look number `poll` began. */
  private settleIdleWaiters(poll: number): void {
    const waiting = this.idleWaiters;
    this.idleWaiters = waiting.filter((w) => w.afterPoll >= poll);
    for (const w of waiting) if (w.afterPoll < poll) w.resolve();
  }

  private async drive(run: RunRecord): Promise<void> {
    const lease: Lease = { runId: run.id, owner: this.owner, epoch: run.leaseEpoch };
    const controller = new AbortController();
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    this.active.set(run.id, { controller, lease, done });
    const observer = this.options.observer;
    const started = performance.now();
    // Epoch 1 is the first claim: the run came from the queue, not from a lost holder.
    observer?.claimed(
      run,
      run.leaseEpoch === 1 && run.startedAt
        ? Math.max(0, (run.startedAt.getTime() - run.createdAt.getTime()) / 1000)
        : undefined,
    );
    observer?.active(this.active.size);
    const ended = (status: string) =>
      observer?.ended(run, status, (performance.now() - started) / 1000);
    const heartbeat = startLeaseHeartbeat(
      this.options.ledger,
      lease,
      this.options.leaseMs,
      (why) => {
        this.options.log?.(
          `worker ${this.owner}: ${why === 'lost' ? 'lost the lease of' : 'could not renew the lease of'} run ${run.id}; stopping work on it`,
        );
        controller.abort(leaseLost(lease));
      },
    );
    try {
      const driver = this.options.drivers.find((d) => d.kind === run.kind);
      if (!driver) {
        await this.options.ledger.finish(lease, 'failed', `no driver for runs of kind ${run.kind}`);
        return;
      }
      const ctx = { run, lease, ledger: this.options.ledger, signal: controller.signal };
      if (run.interruptions > this.options.maxInterruptions) {
        const reason = interruptedTooOften(run.interruptions);
        this.options.log?.(`worker ${this.owner}: run ${run.id} ${reason}`);
        await driver.giveUp?.(ctx, reason);
        await this.options.ledger.finish(lease, 'failed', reason);
        ended('failed');
        return;
      }
      const end = await driver.drive(ctx);
      // A parked run was left by its park, with its lease given up: there is nothing to finish.
      if (end.status === 'awaiting_input') {
        ended(end.status);
        return;
      }
      if (end.status === 'interrupted' || controller.signal.aborted) {
        await this.options.ledger.release(lease).catch(() => undefined);
        return;
      }
      await this.options.ledger.finish(lease, end.status, end.reason);
      ended(end.status);
    } catch (error) {
      if (hasCode(error, LEASE_LOST) || controller.signal.aborted) {
        this.options.log?.(
          `worker ${this.owner}: let go of run ${run.id}; another worker resumes it`,
        );
        // Fenced: a no-op when the lease is already another's, a sooner claim when it is still ours.
        await this.options.ledger.release(lease).catch(() => undefined);
        return;
      }
      const reason = `failed: ${describeFailure(error)}`;
      this.options.log?.(`worker ${this.owner}: run ${run.id} ${reason}`);
      ended('failed');
      await this.options.ledger.finish(lease, 'failed', reason).catch((finishError: unknown) => {
        this.options.log?.(
          `worker ${this.owner}: could not record the failure of ${run.id}: ${describeFailure(finishError)}`,
        );
      });
    } finally {
      heartbeat.stop();
      this.active.delete(run.id);
      observer?.active(this.active.size);
      resolveDone();
      // A freed slot, and the chance to report idle, should not wait out a poll.
      this.wake();
    }
  }
}

/** Why a run is not resumed again: its holders were lost more often than the worker allows. */
function interruptedTooOften(interruptions: number): string {
  return (
    `not resumed: the process running it died or was stopped ${interruptions} times while it ` +
    'held the run, so resuming it again would likely meet the same fault'
  );
}

function leaseLost(lease: Lease): MeshError {
  return new MeshError(
    LEASE_LOST,
    `run ${lease.runId} is no longer leased to ${lease.owner} (epoch ${lease.epoch})`,
  );
}
