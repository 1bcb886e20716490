import { MeshError } from '../tool/errors.ts';
import type { RunDriver, RunEnd } from './driver.ts';
import { RUN_LEASE_MS, startLeaseHeartbeat } from './lease-heartbeat.ts';
import type { RunLedger } from './ledger.ts';
import type { Lease, RunRecord } from './records.ts';
import { RunInterruptedError } from './tool-step.ts';

/**
 * Drives, in this process, a run it created under its own lease (a chat turn answered in the
 * request, an operator's call) — the same run a worker would drive. The lease is heartbeated
 * while the driver works, so if this process dies a worker resumes the run within a lease. If the
 * lease is lost or cannot be renewed in time, work stops, the lease is given back and the caller
 * gets `run_interrupted`: the run is not failed, it is left to its next holder.
 *
 * A driver's own failure ends the run as failed with the reason and is rethrown.
 */
export async function driveHeldRun(
  ledger: RunLedger,
  driver: RunDriver,
  run: RunRecord,
  lease: Lease,
  leaseMs = RUN_LEASE_MS,
): Promise<RunEnd> {
  const controller = new AbortController();
  const heartbeat = startLeaseHeartbeat(ledger, lease, leaseMs, () => controller.abort());
  let end: RunEnd;
  try {
    end = await driver.drive({ run, lease, ledger, signal: controller.signal });
  } catch (error) {
    heartbeat.stop();
    if (controller.signal.aborted) throw await handOver(ledger, lease);
    const message = error instanceof Error ? error.message : String(error);
    await ledger.finish(lease, 'failed', `failed: ${message}`);
    throw error;
  }
  heartbeat.stop();
  // A parked run was left by its park, with its lease given up: there is nothing to finish.
  if (end.status === 'awaiting_input') return end;
  if (end.status === 'interrupted' || controller.signal.aborted)
    throw await handOver(ledger, lease);
  await ledger.finish(lease, end.status, end.reason);
  return end;
}

async function handOver(ledger: RunLedger, lease: Lease): Promise<MeshError> {
  // Fenced: a no-op if another holder has the run already, a sooner claim if it is still ours.
  await ledger.release(lease).catch(() => undefined);
  return new MeshError(
    RunInterruptedError.code,
    `run ${lease.runId} was handed over: this process could not keep its lease, and a worker resumes the run`,
    { run_id: lease.runId },
  );
}
