import { randomBytes } from 'node:crypto';
import { AES_256_KEY_BYTES, gcmOpen, gcmSeal } from './aes-gcm.ts';
import { SecretKeyMismatchError, SecretUndecryptableError, type SecretIdentity } from './errors.ts';
import type { InstanceKey } from './instance-key.ts';

/** One sealed secret version: everything stored, none of it plaintext. */
export interface SealedSecret {
  /** The id of the instance key that wrapped the data key. */
  readonly keyId: string;
  /** The version's data key under the instance key (AES-256-GCM, tag appended). */
  readonly wrappedKey: Buffer;
  readonly keyNonce: Buffer;
  /** The value under the data key (AES-256-GCM, tag appended). */
  readonly ciphertext: Buffer;
  readonly nonce: Buffer;
}

/** Sealed material as read back; a column may be null (erased, or damaged by hand). */
export interface StoredSealedSecret {
  readonly keyId: string;
  readonly wrappedKey: Uint8Array | null;
  readonly keyNonce: Uint8Array | null;
  readonly ciphertext: Uint8Array | null;
  readonly nonce: Uint8Array | null;
}

/**
 * The additional authenticated data: the row's owner, kind and version, in an unambiguous
 * encoding. A ciphertext (or wrapped key) copied to another row fails to authenticate there.
 * The two labels keep a wrapped key from being accepted as a value ciphertext, and back.
 */
function aad(label: 'value' | 'data-key', secret: SecretIdentity): Buffer {
  const fields = [secret.ownerType, secret.ownerId, secret.kind, secret.version];
  return Buffer.from(`mesh.secret.v1/${label}\n${JSON.stringify(fields)}`, 'utf8');
}

/** Seals a value under a fresh random data key, which is wrapped by the instance key. */
export function sealSecret(
  instanceKey: InstanceKey,
  secret: SecretIdentity,
  value: string,
): SealedSecret {
  const dataKey = randomBytes(AES_256_KEY_BYTES);
  const plaintext = Buffer.from(value, 'utf8');
  try {
    const body = gcmSeal(dataKey, plaintext, aad('value', secret));
    const wrapped = instanceKey.wrap(dataKey, aad('data-key', secret));
    return {
      keyId: instanceKey.id,
      wrappedKey: wrapped.sealed,
      keyNonce: wrapped.nonce,
      ciphertext: body.sealed,
      nonce: body.nonce,
    };
  } finally {
    // Best effort: the caller's string cannot be wiped, but our copies can.
    dataKey.fill(0);
    plaintext.fill(0);
  }
}

/**
 * Opens a sealed version. A secret sealed under another instance key is refused with
 * {@link SecretKeyMismatchError} naming both key ids; anything that fails to authenticate is
 * {@link SecretUndecryptableError}. Neither error carries any part of the value.
 */
export function openSecret(
  instanceKey: InstanceKey,
  secret: SecretIdentity,
  sealed: StoredSealedSecret,
): string {
  if (sealed.keyId !== instanceKey.id) {
    throw new SecretKeyMismatchError(secret, sealed.keyId, instanceKey.id);
  }
  const { wrappedKey, keyNonce, ciphertext, nonce } = sealed;
  if (!wrappedKey || !keyNonce) throw new SecretUndecryptableError(secret, 'unwrap');
  const dataKey = instanceKey.unwrap(keyNonce, wrappedKey, aad('data-key', secret));
  if (dataKey === undefined || dataKey.byteLength !== AES_256_KEY_BYTES) {
    throw new SecretUndecryptableError(secret, 'unwrap');
  }
  try {
    const plaintext =
      ciphertext && nonce && gcmOpen(dataKey, nonce, ciphertext, aad('value', secret));
    if (!plaintext) throw new SecretUndecryptableError(secret, 'decrypt');
    const value = plaintext.toString('utf8');
    plaintext.fill(0);
    return value;
  } finally {
    dataKey.fill(0);
  }
}

/**
 * Re-wraps a version's data key from one instance key to another, in this process: the value's
 * ciphertext is untouched and the data key never leaves this function unwrapped.
 */
export function rewrapDataKey(
  from: InstanceKey,
  to: InstanceKey,
  secret: SecretIdentity,
  wrapped: {
    readonly keyId: string;
    readonly wrappedKey: Uint8Array;
    readonly keyNonce: Uint8Array;
  },
): { keyId: string; wrappedKey: Buffer; keyNonce: Buffer } {
  if (wrapped.keyId !== from.id) throw new SecretKeyMismatchError(secret, wrapped.keyId, from.id);
  const dataKey = from.unwrap(wrapped.keyNonce, wrapped.wrappedKey, aad('data-key', secret));
  if (dataKey === undefined || dataKey.byteLength !== AES_256_KEY_BYTES) {
    throw new SecretUndecryptableError(secret, 'unwrap');
  }
  try {
    const next = to.wrap(dataKey, aad('data-key', secret));
    return { keyId: to.id, wrappedKey: next.sealed, keyNonce: next.nonce };
  } finally {
    dataKey.fill(0);
  }
}
