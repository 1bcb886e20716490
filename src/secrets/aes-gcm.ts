import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** AES-256 keys are 32 bytes: the instance key and every data key. */
export const AES_256_KEY_BYTES = 32;
/** 96-bit nonces, the size GCM is specified for; each is random and used once. */
export const GCM_NONCE_BYTES = 12;
/** The full 128-bit tag: shorter tags are accepted by Node unless pinned, and are weaker. */
export const GCM_TAG_BYTES = 16;

/** A GCM output: the nonce, and the ciphertext with its tag appended. */
export interface GcmSealed {
  readonly nonce: Buffer;
  readonly sealed: Buffer;
}

/** Encrypts and authenticates `plaintext` (and `aad`) under a fresh random nonce. */
export function gcmSeal(key: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): GcmSealed {
  const nonce = randomBytes(GCM_NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: GCM_TAG_BYTES });
  cipher.setAAD(aad);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { nonce, sealed: Buffer.concat([body, cipher.getAuthTag()]) };
}

/**
 * Decrypts what {@link gcmSeal} produced. Returns undefined when anything fails to authenticate
 * (or has the wrong shape), so the caller raises an error that names the secret, not the cipher.
 */
export function gcmOpen(
  key: Uint8Array,
  nonce: Uint8Array,
  sealed: Uint8Array,
  aad: Uint8Array,
): Buffer | undefined {
  if (nonce.byteLength !== GCM_NONCE_BYTES || sealed.byteLength < GCM_TAG_BYTES) return undefined;
  const cut = sealed.byteLength - GCM_TAG_BYTES;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce, {
      authTagLength: GCM_TAG_BYTES,
    });
    decipher.setAAD(aad);
    decipher.setAuthTag(sealed.subarray(cut));
    return Buffer.concat([decipher.update(sealed.subarray(0, cut)), decipher.final()]);
  } catch {
    return undefined;
  }
}
