import { rewrapDataKey } from './envelope.ts';
import { InstanceKeyMismatchError, InstanceKeyRotationError } from './errors.ts';
import type { InstanceKey } from './instance-key.ts';
import type { InstanceKeyRows } from './secret-records.ts';

/**
 * Checks this process's instance key against the deployment's: the first process to start
 * records its key's fingerprint; any later one holding another key is refused with
 * {@link InstanceKeyMismatchError}. A process holding the target of a pending rotation is
 * refused too, until the rotation has finished.
 */
export async function checkInstanceKey(rows: InstanceKeyRows, key: InstanceKey): Promise<void> {
  const recorded = await rows.record(key.id);
  if (recorded.fingerprint !== key.id) {
    throw new InstanceKeyMismatchError(recorded.fingerprint, key.id);
  }
}

/** Tunables of a rotation; `afterBatch` is a test's hook (a crash simulated midway). */
export interface RotationOptions {
  readonly batchSize?: number;
  readonly afterBatch?: (rewrapped: number) => Promise<void> | void;
}

/**
 * Rotates the deployment from instance key `from` to `to`: records `to` as pending, re-wraps
 * every live secret's data key in batches (each row is marked by the key it is now under, so
 * none is done twice), then records `to` as the key. Plaintext never leaves this process. A
 * rotation interrupted at any point is continued by calling this again with the same two keys.
 * Returns how many data keys this call re-wrapped.
 */
export async function rotateInstanceKey(
  rows: InstanceKeyRows,
  from: InstanceKey,
  to: InstanceKey,
  options: RotationOptions = {},
): Promise<number> {
  if (from.id === to.id) {
    throw new InstanceKeyRotationError('the new instance key is the current one', {
      fingerprint: from.id,
    });
  }
  const begun = await rows.beginRotation(from.id, to.id);
  if (!begun) {
    throw new InstanceKeyRotationError(
      `cannot rotate from instance key ${from.id} to ${to.id}: the deployment's key is not ` +
        `${from.id}, or a rotation to another key is pending (run it again with that key)`,
      { fromFingerprint: from.id, toFingerprint: to.id },
    );
  }
  const batchSize = options.batchSize ?? 100;
  let total = 0;
  for (;;) {
    const done = await rows.rewrapBatch(from.id, batchSize, (row) =>
      rewrapDataKey(from, to, row, row),
    );
    total += done;
    if (done > 0) await options.afterBatch?.(total);
    if (done > 0) continue;
    if (await rows.finishRotation(from.id, to.id)) return total;
    // Rows another rotator holds, or just captured under the old key: look again shortly.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
