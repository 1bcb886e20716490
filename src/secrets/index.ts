export {
  InstanceKeyError,
  InstanceKeyMismatchError,
  InstanceKeyRotationError,
  SECRET_ERROR_CODES,
  SecretInputError,
  SecretKeyMismatchError,
  SecretUndecryptableError,
  type SecretErrorCode,
  type SecretIdentity,
} from './errors.ts';
export {
  INSTANCE_KEY_FILE_NAME,
  InstanceKey,
  instanceKeyId,
  loadInstanceKey,
  type LoadInstanceKeyOptions,
} from './instance-key.ts';
export {
  agentToolOwnerId,
  checkSecretKind,
  checkSecretOwner,
  checkSecretValue,
  MAX_SECRET_VALUE_BYTES,
  type SecretFormat,
  type SecretOwner,
} from './secret-input.ts';
export {
  createSecretStore,
  type SecretAddress,
  type SecretCapture,
  type SecretMetadata,
  type SecretStore,
} from './secret-store.ts';
export { SECRET_OWNER_TYPES } from './secret-records.ts';
export type { InstanceKeyRows, SecretOwnerType, SecretRows } from './secret-records.ts';
export {
  checkInstanceKey,
  rotateInstanceKey,
  type RotationOptions,
} from './instance-key-record.ts';
