import { createHash } from 'node:crypto';
import type { EffectKey } from '../tool/outbound.ts';

/**
 * Our idempotency key for one effect: sha256 of (run, call step, call id, effect name). The step
 * makes a model's reused call id (`call_0` in every round) a different effect; the name tells
 * several effects of one call apart. The UUID form is the hash's first 128 bits in the version 4
 * layout, for providers that accept a client-chosen id.
 */
export function effectKey(runId: string, step: number, callId: string, name: string): EffectKey {
  const key = createHash('sha256')
    .update(JSON.stringify(['mesh.outbound.v1', runId, step, callId, name]))
    .digest('hex');
  const variant = ((parseInt(key.slice(16, 17), 16) & 0x3) | 0x8).toString(16);
  const uuid = [
    key.slice(0, 8),
    key.slice(8, 12),
    `4${key.slice(13, 16)}`,
    `${variant}${key.slice(17, 20)}`,
    key.slice(20, 32),
  ].join('-');
  return Object.freeze({ key, uuid });
}
