import type { PendingEnds } from '../run/call-plan.ts';
import type { LedgerWrite, RunLedger } from '../run/ledger.ts';
import type { Lease, StepRecord } from '../run/records.ts';

/**
 * A round's ends, held back to be written in the same commit as the turn's next write (its next
 * model request, or how it ends): two commits a round (decision 0046). The turn works from them as
 * they will be written meanwhile.
 */
export class HeldEnds {
  private held: PendingEnds | undefined;

  constructor(
    private readonly ledger: RunLedger,
    private readonly lease: Lease,
  ) {}

  hold(pending: PendingEnds | undefined): void {
    this.held = pending;
  }

  /**
   * Writes the held ends, with `also` after them, in one commit. `steps` comes back with what was
   * written in place of what was shown (read again should a step not be where it was shown, which
   * the lease, under which this holder writes every step, rules out); `also` with what it wrote.
   */
  async write(
    steps: readonly StepRecord[],
    also: readonly LedgerWrite[] = [],
  ): Promise<{ steps: StepRecord[]; also: StepRecord[] }> {
    const ends = this.held;
    this.held = undefined;
    if (!ends) {
      const written = also.length === 0 ? [] : await this.ledger.recordSteps(this.lease, also);
      return { steps: [...steps], also: written.flatMap((w) => w.steps) };
    }
    let written: Awaited<ReturnType<RunLedger['recordPrepared']>>[number] | undefined;
    let extra: typeof written;
    try {
      [written, extra] = await this.ledger.recordPrepared(
        this.lease,
        [ends.prepared, this.ledger.prepareSteps(also)],
        ends.usage,
      );
    } catch (error) {
      // Held still: the turn's way out writes them alone (what failed may have been `also`).
      this.held = ends;
      throw error;
    }
    const alsoWrote = (extra ?? []).flatMap((w) => w.steps);
    const now = [...steps];
    for (const step of (written ?? []).flatMap((w) => w.steps)) {
      const at = now.findIndex((s) => s.seq === step.seq);
      if (now[at]?.kind !== step.kind)
        return { steps: await this.ledger.steps(this.lease.runId), also: alsoWrote };
      now[at] = step;
    }
    return { steps: now, also: alsoWrote };
  }
}
