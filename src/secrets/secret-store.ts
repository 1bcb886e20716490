import { randomUUID } from 'node:crypto';
import {
  SECRET_OWNER_TYPES,
  type OwnerMatch,
  type SecretOwnerType,
  type SecretRows,
  type SecretVersionRecord,
} from './secret-records.ts';
import { openSecret, sealSecret } from './envelope.ts';
import type { InstanceKey } from './instance-key.ts';
import type { Redactor } from '../tool/redaction.ts';
import {
  checkSecretKind,
  checkSecretOwner,
  checkSecretValue,
  defaultSecretFormat,
  type SecretFormat,
  type SecretOwner,
} from './secret-input.ts';

/** One secret slot: an owner and a kind. */
export interface SecretAddress extends SecretOwner {
  readonly kind: string;
}

/** A value to store in a slot. */
export interface SecretCapture extends SecretAddress {
  readonly value: string;
  /** What the value is read as; by default what its owner's secrets are ({@link defaultSecretFormat}). */
  readonly format?: SecretFormat;
  /** The input field the value came from, named by a refusal (`value` unless given). */
  readonly field?: string;
}

/**
 * What may be said about a stored secret: that it is present, and which version. Never the
 * value or any sealed material. A version above 1 means the secret has been rotated.
 */
export interface SecretMetadata {
  readonly ownerType: SecretOwnerType;
  readonly ownerId: string;
  readonly kind: string;
  readonly version: number;
  readonly createdAt: Date;
  readonly present: true;
}

/** Captures, describes, reveals and retires secrets; see {@link createSecretStore}. */
export interface SecretStore {
  /**
   * Seals `value` as the slot's next version (1, 2, 3…): capture and rotation are the same
   * operation. Concurrent captures get distinct versions. Returns metadata only.
   */
  capture(input: SecretCapture): Promise<SecretMetadata>;
  /** The owner's live secrets, newest version of each kind, ordered by kind. */
  describe(owner: SecretOwner): Promise<SecretMetadata[]>;
  /**
   * The live secrets of every matching owner (an agent's installations: `<agent id>:`), newest
   * version of each kind, ordered by owner then kind: one read, however many owners match.
   */
  describeMatching(owners: OwnerMatch): Promise<SecretMetadata[]>;
  /** One live secret's metadata, or undefined when the slot is empty or retired. */
  describeOne(owner: SecretOwner, kind: string): Promise<SecretMetadata | undefined>;
  /**
   * Decrypts the slot's newest live version, in this process, at the moment of use; undefined
   * when there is none. The caller holds plaintext: it must hand the value only to the handler
   * or client that needs it, and never persist, log, return from an API or render it in a prompt.
   */
  reveal(address: SecretAddress): Promise<string | undefined>;
  /** Revokes a slot: every version is retired and its sealed material erased. True if any was live. */
  retire(owner: SecretOwner, kind: string): Promise<boolean>;
  /**
   * Revokes every slot of the matching owners (an owner being deleted): how many versions were
   * live. Part of the caller's transaction when the store is a unit of work's.
   */
  retireOwners(owners: OwnerMatch): Promise<number>;
}

/** Builds metadata field by field, so no other column can ride along. */
function metadataOf(record: SecretVersionRecord): SecretMetadata {
  return Object.freeze({
    ownerType: record.ownerType,
    ownerId: record.ownerId,
    kind: record.kind,
    version: record.version,
    createdAt: record.createdAt,
    present: true,
  });
}

export interface SecretStoreOptions {
  /**
   * Holds every value this process captures or reveals, so that whatever the outside world sends
   * back is cleaned of it (see src/tool/redaction.ts): a value that left the process passed here.
   */
  readonly redactor?: Redactor;
}

/**
 * The secret store over a database and the instance key. Every input is checked before the
 * database is touched; refusals are `SecretInputError`s naming the field.
 */
export function createSecretStore(
  rows: SecretRows,
  instanceKey: InstanceKey,
  options: SecretStoreOptions = {},
): SecretStore {
  const hold = (value: string) => options.redactor?.hold(value);
  const slotOf = (owner: SecretOwner, kind: string) => ({
    ...checkSecretOwner(owner),
    kind: checkSecretKind(kind),
  });

  return Object.freeze({
    async capture(input: SecretCapture): Promise<SecretMetadata> {
      const slot = slotOf(input, input.kind);
      const value = checkSecretValue(
        input.value,
        input.format ?? defaultSecretFormat(slot.ownerType),
        input.field,
      );
      hold(value);
      const record = await rows.insertVersion(randomUUID(), slot, (version) =>
        sealSecret(instanceKey, { ...slot, version }, value),
      );
      return metadataOf(record);
    },

    async describe(owner: SecretOwner): Promise<SecretMetadata[]> {
      const records = await rows.listLive(checkSecretOwner(owner));
      return records.map(metadataOf);
    },

    async describeMatching(owners: OwnerMatch): Promise<SecretMetadata[]> {
      const records = await rows.listLive(owners);
      return records.map(metadataOf);
    },

    async describeOne(owner: SecretOwner, kind: string): Promise<SecretMetadata | undefined> {
      const record = await rows.findLive(slotOf(owner, kind));
      return record && metadataOf(record);
    },

    async reveal(address: SecretAddress): Promise<string | undefined> {
      const record = await rows.findLiveSealed(slotOf(address, address.kind));
      if (record === undefined) return undefined;
      const value = openSecret(instanceKey, record, record);
      hold(value);
      return value;
    },

    async retire(owner: SecretOwner, kind: string): Promise<boolean> {
      return (await rows.retire(slotOf(owner, kind))) > 0;
    },

    async retireOwners(owners: OwnerMatch): Promise<number> {
      const id =
        'ownerId' in owners
          ? owners.ownerId
          : 'ownerIdPrefix' in owners
            ? owners.ownerIdPrefix
            : owners.ownerIdSuffix;
      if (id === '') throw new TypeError('an owner match needs a non-empty id');
      if ('ownerId' in owners) checkSecretOwner(owners);
      else if (!(SECRET_OWNER_TYPES as readonly string[]).includes(owners.ownerType))
        throw new TypeError(`unknown secret owner type ${String(owners.ownerType)}`);
      return rows.retireOwners(owners);
    },

    /** A store serializes as the id of the key it holds, never the key. */
    toJSON(): { instanceKeyId: string } {
      return { instanceKeyId: instanceKey.id };
    },
  });
}
