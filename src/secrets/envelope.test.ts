import type { ErrorCode } from '../tool/error-codes.ts';
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hasCode, serializeError } from '../tool/errors.ts';
import { openSecret, sealSecret, type StoredSealedSecret } from './envelope.ts';
import { SECRET_ERROR_CODES } from './errors.ts';
import { InstanceKey } from './instance-key.ts';

const CANARY = 'canary-7f3a9c1e-plaintext-ſecret';
const key = new InstanceKey(randomBytes(32));
const slot = {
  ownerType: 'agent_tool',
  ownerId: '6f0d8f5e-3a4b-4c2d-9e1f-0a1b2c3d4e5f:mesh.linear',
  kind: 'linear_api_key',
  version: 1,
};

function flipped(bytes: Uint8Array, at = 0): Buffer {
  const copy = Buffer.from(bytes);
  copy[at] = (copy[at] ?? 0) ^ 0x01;
  return copy;
}

/** Runs `fn`, expecting a refusal with `code` that says nothing of the plaintext. */
function refusal(fn: () => unknown, code: ErrorCode): string {
  try {
    fn();
  } catch (error) {
    expect(hasCode(error, code)).toBe(true);
    const shown = JSON.stringify(serializeError(error)) + String(error);
    expect(shown).not.toContain(CANARY);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('envelope encryption of one secret version', () => {
  it('opens what it sealed, under the same key and owner', () => {
    const sealed = sealSecret(key, slot, CANARY);
    expect(openSecret(key, slot, sealed)).toBe(CANARY);
    expect(sealed.keyId).toBe(key.id);
    expect(sealed.wrappedKey.byteLength).toBe(48);
    expect(sealed.keyNonce.byteLength).toBe(12);
    expect(sealed.nonce.byteLength).toBe(12);
    expect(sealed.ciphertext.byteLength).toBe(Buffer.byteLength(CANARY) + 16);
  });

  it('uses a fresh data key and nonces for every seal of the same value', () => {
    const a = sealSecret(key, slot, CANARY);
    const b = sealSecret(key, slot, CANARY);
    expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
    expect(a.wrappedKey.equals(b.wrappedKey)).toBe(false);
    expect(a.nonce.equals(b.nonce)).toBe(false);
    expect(a.keyNonce.equals(b.keyNonce)).toBe(false);
    // Unwrapping a's key with b's nonce fails: the data keys really are independent.
    expect(() => openSecret(key, slot, { ...a, wrappedKey: b.wrappedKey })).toThrow();
  });

  it('contains no part of the plaintext in any sealed field', () => {
    const sealed = sealSecret(key, slot, CANARY);
    const raw = Buffer.from(CANARY, 'utf8');
    for (const field of [sealed.wrappedKey, sealed.keyNonce, sealed.nonce, sealed.ciphertext]) {
      expect(field.includes(raw)).toBe(false);
      expect(field.includes(raw.subarray(0, 8))).toBe(false);
    }
  });

  it.each(['wrappedKey', 'keyNonce'] as const)(
    'refuses a sealed secret whose %s was altered',
    (field) => {
      const sealed = sealSecret(key, slot, CANARY);
      const message = refusal(
        () => openSecret(key, slot, { ...sealed, [field]: flipped(sealed[field]) }),
        SECRET_ERROR_CODES.undecryptable,
      );
      expect(message).toContain('failed authentication at unwrap');
    },
  );

  it.each(['ciphertext', 'nonce'] as const)(
    'refuses a sealed secret whose %s was altered',
    (field) => {
      const sealed = sealSecret(key, slot, CANARY);
      for (const at of [0, sealed[field].byteLength - 1]) {
        const message = refusal(
          () => openSecret(key, slot, { ...sealed, [field]: flipped(sealed[field], at) }),
          SECRET_ERROR_CODES.undecryptable,
        );
        expect(message).toContain('failed authentication at decrypt');
      }
    },
  );

  it('refuses a truncated tag, missing material, and a wrapped key offered as the ciphertext', () => {
    const sealed = sealSecret(key, slot, CANARY);
    const variants: StoredSealedSecret[] = [
      { ...sealed, ciphertext: sealed.ciphertext.subarray(0, sealed.ciphertext.byteLength - 4) },
      { ...sealed, ciphertext: null },
      { ...sealed, nonce: null },
      { ...sealed, wrappedKey: null },
      { ...sealed, keyNonce: sealed.keyNonce.subarray(0, 8) },
      { ...sealed, ciphertext: sealed.wrappedKey, nonce: sealed.keyNonce },
    ];
    for (const variant of variants) {
      refusal(() => openSecret(key, slot, variant), SECRET_ERROR_CODES.undecryptable);
    }
  });

  it.each([
    ['ownerType', { ownerType: 'model_provider' }],
    ['ownerId', { ownerId: '6f0d8f5e-3a4b-4c2d-9e1f-0a1b2c3d4e5f:mesh.github' }],
    ['kind', { kind: 'github_token' }],
    ['version', { version: 2 }],
  ])('binds the ciphertext to its %s', (_field, change) => {
    const sealed = sealSecret(key, slot, CANARY);
    refusal(
      () => openSecret(key, { ...slot, ...change }, sealed),
      SECRET_ERROR_CODES.undecryptable,
    );
  });

  it('names both key ids when the secret was sealed under another instance key', () => {
    const other = new InstanceKey(randomBytes(32));
    const sealed = sealSecret(other, slot, CANARY);
    const message = refusal(() => openSecret(key, slot, sealed), SECRET_ERROR_CODES.keyMismatch);
    expect(message).toContain(
      `secret was encrypted under instance key ${other.id}; this Mesh has ${key.id}`,
    );
    // A forged key id does not help: the wrapped key still fails to authenticate.
    refusal(
      () => openSecret(key, slot, { ...sealed, keyId: key.id }),
      SECRET_ERROR_CODES.undecryptable,
    );
  });

  it('round-trips multi-byte, control and boundary-size values exactly', () => {
    for (const value of ['x', 'línea 🔑\n\t\u0000end', 'é'.repeat(32 * 1024)]) {
      expect(openSecret(key, slot, sealSecret(key, slot, value))).toBe(value);
    }
  });
});
