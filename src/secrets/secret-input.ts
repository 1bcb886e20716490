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
    case 'browser_backend':
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
 * What a secret value is read as. A `line` (a model key, an MCP token, a backend's key) is sent in
 * an HTTP header or a vendor SDK's auth field, so it must be one line of printable ASCII. A `key`
 * is a package's credential, which may also be a PEM block (a GitHub App's private key, which the
 * package signs with and never sends). A `document` is a structure Mesh itself writes (an MCP
 * OAuth token set, as JSON), held to the storable-text rule only.
 */
export type SecretFormat = 'line' | 'key' | 'document';

/**
 * The format an owner's secrets are read in when the caller names none: a package's credentials
 * may be PEM keys; every other owner's secret is a key or token sent in a header.
 */
export function defaultSecretFormat(ownerType: SecretOwnerType): SecretFormat {
  return ownerType === 'agent_tool' ? 'key' : 'line';
}

/** One line of printable ASCII, without surrounding spaces: what an HTTP header can carry. */
const CREDENTIAL_LINE = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;
/** `-----BEGIN …-----`, printable ASCII lines, `-----END …-----`, an optional final line break. */
const PEM_BLOCK =
  /^-----BEGIN [A-Z0-9 ]{1,64}-----\r?\n(?:[\x20-\x7e]{0,256}\r?\n){1,2048}-----END [A-Z0-9 ]{1,64}-----(?:\r?\n)?$/;

function refuseValue(field: string, why: string): never {
  throw new SecretInputError(SECRET_ERROR_CODES.valueInvalid, field, `\`${field}\` ${why}`);
}

/** Why a credential cannot be used as one, or undefined when it can. Never quotes the value. */
function credentialFault(value: string, format: 'line' | 'key'): string | undefined {
  if (CREDENTIAL_LINE.test(value) || (format === 'key' && PEM_BLOCK.test(value))) return undefined;
  if (value.includes('\0')) return 'holds a NUL character, which no credential can carry';
  if (/[\r\n]/.test(value))
    return format === 'key'
      ? 'holds a line break: a credential is one line (or a PEM block from -----BEGIN to -----END)'
      : 'holds a line break: a key or token sent in a header is one line of printable text';
  if (/\p{Cc}/u.test(value)) return 'holds a control character, which no credential can carry';
  if (/[^\x20-\x7e]/.test(value))
    return 'holds a character outside printable ASCII, which an HTTP header cannot carry';
  return 'begins or ends with whitespace';
}

/**
 * Checks a secret value: a non-empty, well-formed string of at most 64 KiB in UTF-8. A lone
 * surrogate would not survive the UTF-8 round trip, so it is refused rather than altered. A
 * credential must also be usable as one ({@link SecretFormat}): refused at capture, a key with a
 * line break would otherwise fail every later request that sends it (and a vendor's error about
 * the header could quote it). Refusals name `field` (the
 * input the value came from: `api_key`, `token`), never the value.
 */
export function checkSecretValue(
  value: string,
  format: SecretFormat = 'line',
  field = 'value',
): string {
  const ok =
    typeof value === 'string' &&
    value.length > 0 &&
    Buffer.byteLength(value, 'utf8') <= MAX_SECRET_VALUE_BYTES &&
    !LONE_SURROGATE.test(value);
  if (!ok) {
    refuseValue(
      field,
      `must be a non-empty, well-formed string of at most ${MAX_SECRET_VALUE_BYTES} bytes in UTF-8`,
    );
  }
  if (format !== 'document') {
    const fault = credentialFault(value, format);
    if (fault !== undefined) refuseValue(field, fault);
  }
  return value;
}
