import { PACKAGE_ID_PATTERN, SECRET_KIND_PATTERN } from '../manifest/versioning.ts';
import { SECRET_OWNER_TYPES, type SecretOwnerType } from './secret-records.ts';
import { SECRET_ERROR_CODES, SecretInputError } from './errors.ts';

/** The largest secret value accepted, in UTF-8 bytes: credentials, not documents. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** Owner ids of the kinds whose shape is not fixed yet: short, printable, no whitespace. */
const GENERIC_OWNER_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,199}$/;
/** With the `u` flag a well-formed pair is one code point, so this matches only lone halves. */
const LONE_SURROGATE = /\p{Cs}/u;

/** Who owns a secret. Derived by Mesh from the installation, never declared by a manifest. */
export interface SecretOwner {
  readonly ownerType: SecretOwnerType;
  readonly ownerId: string;
}

/** The owner id of an agent's installation of a package. */
export function agentToolOwnerId(agentId: string, packageId: string): string {
  return `${agentId}:${packageId}`;
}

function ownerIdMatches(ownerType: SecretOwnerType, ownerId: string): boolean {
  switch (ownerType) {
    case 'agent':
      return UUID.test(ownerId);
    case 'agent_tool': {
      const at = ownerId.indexOf(':');
      return (
        at > 0 && UUID.test(ownerId.slice(0, at)) && PACKAGE_ID_PATTERN.test(ownerId.slice(at + 1))
      );
    }
    case 'model_provider':
    case 'agent_tool_provider':
    case 'execution_backend':
    case 'tool_provider':
      return GENERIC_OWNER_ID.test(ownerId);
    default: {
      const _never: never = ownerType;
      return _never;
    }
  }
}

/**
 * Checks an owner (its type is one of the closed set, its id has that type's shape) and returns
 * a copy holding only those two fields. Messages name fields, never the values given.
 */
export function checkSecretOwner(owner: SecretOwner): SecretOwner {
  const ownerType = owner.ownerType as unknown;
  if (
    typeof ownerType !== 'string' ||
    !(SECRET_OWNER_TYPES as readonly string[]).includes(ownerType)
  ) {
    throw new SecretInputError(
      SECRET_ERROR_CODES.ownerInvalid,
      'ownerType',
      `\`ownerType\` must be one of: ${SECRET_OWNER_TYPES.join(', ')}`,
    );
  }
  const type = ownerType as SecretOwnerType;
  if (typeof owner.ownerId !== 'string' || !ownerIdMatches(type, owner.ownerId)) {
    throw new SecretInputError(
      SECRET_ERROR_CODES.ownerInvalid,
      'ownerId',
      `\`ownerId\` is not a valid id for owner type ${type}` +
        (type === 'agent_tool' ? ' (expected `<agent id>:<package id>`)' : ''),
    );
  }
  return { ownerType: type, ownerId: owner.ownerId };
}

/** Checks a secret kind against the same rule manifests use for `secret:<kind>` needs. */
export function checkSecretKind(kind: string): string {
  if (typeof kind !== 'string' || !SECRET_KIND_PATTERN.test(kind)) {
    throw new SecretInputError(
      SECRET_ERROR_CODES.kindInvalid,
      'kind',
      `\`kind\` must match ${SECRET_KIND_PATTERN.source}`,
    );
  }
  return kind;
}

/**
 * Checks a secret value: a non-empty, well-formed string of at most 64 KiB in UTF-8. A lone
 * surrogate would not survive the UTF-8 round trip, so it is refused rather than altered.
 */
export function checkSecretValue(value: string): string {
  const ok =
    typeof value === 'string' &&
    value.length > 0 &&
    Buffer.byteLength(value, 'utf8') <= MAX_SECRET_VALUE_BYTES &&
    !LONE_SURROGATE.test(value);
  if (!ok) {
    throw new SecretInputError(
      SECRET_ERROR_CODES.valueInvalid,
      'value',
      `\`value\` must be a non-empty, well-formed string of at most ${MAX_SECRET_VALUE_BYTES} ` +
        'bytes in UTF-8',
    );
  }
  return value;
}
