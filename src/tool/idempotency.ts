import { createHash } from 'node:crypto';

/** Our idempotency key for one effect, in the two shapes providers take. */
export interface EffectKey {
  /** sha256 hex of (run, call step, call id, effect name): stable across a resume. */
  readonly key: string;
  /** The same key as an RFC 4122 (version 4 layout) UUID, for providers that take a client id. */
  readonly uuid: string;
}

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
