import type { RunLedger } from './ledger.ts';
import type { Lease } from './records.ts';

/**
 * How long a run's lease lasts between heartbeats. A holder renews it every third of this, so a
 * holder that died leaves its runs claimable within this plus a worker's poll (well under 15 s).
 */
export const RUN_LEASE_MS = 9_000;

/** A running heartbeat: `stop()` ends it (the lease itself is finished or released by the caller). */
export interface LeaseHeartbeat {
  stop(): void;
}

/**
 * Renews `lease` every `leaseMs / 3` while its holder works. Renewal is conditional on still
 * holding the lease (owner and epoch), so it never extends a lease another worker has taken.
 * `onLost` is called once — and the holder must stop working on the run — when a renewal finds
 * the lease gone, or when no renewal has succeeded for two thirds of `leaseMs` (the database is
 * unreachable): the holder stops before a lease it could not renew expires and is claimed.
 */
export function startLeaseHeartbeat(
  ledger: RunLedger,
  lease: Lease,
  leaseMs: number,
  onLost: (why: 'lost' | 'unrenewed') => void,
): LeaseHeartbeat {
  const every = Math.max(20, Math.floor(leaseMs / 3));
  const patience = Math.max(every, Math.floor((leaseMs * 2) / 3));
  let stopped = false;
  let renewing = false;
  const lost = (why: 'lost' | 'unrenewed'): void => {
    if (stopped) return;
    stop();
    onLost(why);
  };
  // Measured from when a renewal was sent: the database extends the lease from its own later now().
  let giveUp = setTimeout(() => lost('unrenewed'), patience);
  const renewal = setInterval(() => {
    if (renewing || stopped) return;
    renewing = true;
    const sentAt = Date.now();
    ledger.renew(lease, leaseMs).then(
      (held) => {
        renewing = false;
        if (stopped) return;
        if (!held) return lost('lost');
        clearTimeout(giveUp);
        giveUp = setTimeout(() => lost('unrenewed'), Math.max(0, sentAt + patience - Date.now()));
      },
      () => {
        renewing = false; // the give-up timer stands: an unrenewed lease is let go in time
      },
    );
  }, every);
  function stop(): void {
    stopped = true;
    clearInterval(renewal);
    clearTimeout(giveUp);
  }
  return { stop };
}
