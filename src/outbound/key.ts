import { idempotencyKey } from '../tool/idempotency.ts';
import type { EffectKey } from '../tool/outbound.ts';

/**
 * Our idempotency key for one effect: sha256 of (run, call step, call id, effect name). The step
 * makes a model's reused call id (`call_0` in every round) a different effect; the name tells
 * several effects of one call apart.
 */
export function effectKey(runId: string, step: number, callId: string, name: string): EffectKey {
  return idempotencyKey(['mesh.outbound.v1', runId, step, callId, name]);
}
