import type { JsonObject } from '../model/json.ts';
import { MeshError } from '../tool/errors.ts';

/**
 * The stable codes of this module's refusals. Callers match with `hasCode(error, code)`; no
 * message or `data` here ever carries a secret value or key material.
 */
export const SECRET_ERROR_CODES = Object.freeze({
  instanceKeyMissing: 'instance_key_missing',
  instanceKeyUnreadable: 'instance_key_unreadable',
  instanceKeyMalformed: 'instance_key_malformed',
  instanceKeyExposed: 'instance_key_exposed',
  ownerInvalid: 'secret_owner_invalid',
  kindInvalid: 'secret_kind_invalid',
  valueInvalid: 'secret_value_invalid',
  keyMismatch: 'secret_key_mismatch',
  instanceKeyMismatch: 'instance_key_mismatch',
  rotationRefused: 'instance_key_rotation_refused',
  undecryptable: 'secret_undecryptable',
} as const);

/** One of {@link SECRET_ERROR_CODES}. */
export type SecretErrorCode = (typeof SECRET_ERROR_CODES)[keyof typeof SECRET_ERROR_CODES];

/** The instance key file was refused. The message names the path, never the file's content. */
export class InstanceKeyError extends MeshError {
  readonly path: string;
  constructor(code: SecretErrorCode, path: string, message: string, options?: { cause?: unknown }) {
    super(code, message, { path }, options);
    this.path = path;
  }
}

/** A capture or lookup was refused before touching the database; the message names the field. */
export class SecretInputError extends MeshError {
  constructor(code: SecretErrorCode, field: string, message: string) {
    super(code, message, { field });
  }
}

/** Which stored secret a decryption failure is about: metadata only. */
export interface SecretIdentity {
  readonly ownerType: string;
  readonly ownerId: string;
  readonly kind: string;
  readonly version: number;
}

function identityData(secret: SecretIdentity): JsonObject {
  return {
    ownerType: secret.ownerType,
    ownerId: secret.ownerId,
    kind: secret.kind,
    version: secret.version,
  };
}

function describeSecret(secret: SecretIdentity): string {
  return `secret ${secret.kind} of ${secret.ownerType} ${secret.ownerId} (version ${secret.version})`;
}

/**
 * The secret was sealed under another instance key. Said plainly, because the alternative (an
 * authentication failure) sends an operator hunting for tampering when the key file was swapped.
 */
export class SecretKeyMismatchError extends MeshError {
  static readonly code = SECRET_ERROR_CODES.keyMismatch;
  constructor(secret: SecretIdentity, storedKeyId: string, instanceKeyId: string) {
    super(
      SecretKeyMismatchError.code,
      `${describeSecret(secret)}: secret was encrypted under instance key ${storedKeyId}; ` +
        `this Mesh has ${instanceKeyId}`,
      { ...identityData(secret), storedKeyId, instanceKeyId },
    );
  }
}

/**
 * The stored secret failed authentication: its ciphertext, nonces, wrapped key or the owner
 * fields it is bound to were altered (or a row was moved to another owner).
 */
export class SecretUndecryptableError extends MeshError {
  static readonly code = SECRET_ERROR_CODES.undecryptable;
  constructor(secret: SecretIdentity, stage: 'unwrap' | 'decrypt') {
    super(
      SecretUndecryptableError.code,
      `${describeSecret(secret)} failed authentication at ${stage}: its stored ciphertext, ` +
        'nonce, wrapped key or owner fields do not match what was sealed',
      { ...identityData(secret), stage },
    );
  }
}

/**
 * This process holds another instance key than the one the deployment recorded: starting would
 * seal secrets the other replicas cannot read. Names both fingerprints (never a key) and the fix.
 */
export class InstanceKeyMismatchError extends MeshError {
  static readonly code = SECRET_ERROR_CODES.instanceKeyMismatch;
  constructor(recorded: string, held: string) {
    super(
      InstanceKeyMismatchError.code,
      `this process's instance key has fingerprint ${held}, but the database was set up with ` +
        `instance key ${recorded}: every replica must use the deployment's key. Set ` +
        "MESH_INSTANCE_KEY_FILE to the path of the deployment's key file (its fingerprint is " +
        '`sha256sum <file> | cut -c1-16`) and start again',
      { recordedFingerprint: recorded, instanceKeyFingerprint: held },
    );
  }
}

/** A rotation could not begin: the key given as the current one is not recorded, or another rotation is pending. */
export class InstanceKeyRotationError extends MeshError {
  static readonly code = SECRET_ERROR_CODES.rotationRefused;
  constructor(message: string, data: JsonObject) {
    super(InstanceKeyRotationError.code, message, data);
  }
}
