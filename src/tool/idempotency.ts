import { createHash } from 'node:crypto';
import type { EffectKey } from './outbound.ts';

/**
 * A stable idempotency key for what `parts` name: sha256 of their JSON, in hex, and the same hash
 * as a UUID (its first 128 bits in the version 4 layout) for providers that take a client-chosen
 * id. The first part names the key's namespace, so keys of different kinds never collide.
 */
export function idempotencyKey(parts: readonly (string | number)[]): EffectKey {
  const key = createHash('sha256').update(JSON.stringify(parts)).digest('hex');
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
