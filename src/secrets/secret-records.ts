/*
 * The secrets layer's records and the rows it needs from storage. Declared here, implemented by
 * src/store (`secretRows`), so sealing and revealing never see SQL.
 */

/**
 * Who may own a secret: a closed set, checked again by the table. `agent_tool` is an agent's
 * installation of a package (owner id `<agent id>:<package id>`); `agent_tool_provider` is an
 * agent's binding to a tool provider (an MCP server); `execution_backend` is a workspace
 * backend's own API key; `tool_provider` is a query provider's own API key (web search and
 * reading are credentialed by the operator, not by each agent); `browser_backend` is a browser
 * vendor's API key.
 */
export const SECRET_OWNER_TYPES = Object.freeze([
  'agent',
  'agent_tool',
  'model_provider',
  'agent_tool_provider',
  'execution_backend',
  'tool_provider',
  'browser_backend',
] as const);

/** One of {@link SECRET_OWNER_TYPES}. */
export type SecretOwnerType = (typeof SECRET_OWNER_TYPES)[number];

/** One secret slot: an owner and the kind of credential it holds there. */
export interface SecretSlot {
  readonly ownerType: SecretOwnerType;
  readonly ownerId: string;
  readonly kind: string;
}

/** A stored version without its sealed material: what may be listed. */
export interface SecretVersionRecord extends SecretSlot {
  readonly id: string;
  readonly version: number;
  readonly keyId: string;
  readonly createdAt: Date;
  readonly retiredAt: Date | null;
}

/** The sealed material of one version, as the envelope produced it. */
export interface SealedSecretColumns {
  readonly keyId: string;
  readonly wrappedKey: Uint8Array;
  readonly keyNonce: Uint8Array;
  readonly nonce: Uint8Array;
  readonly ciphertext: Uint8Array;
}

/** A stored version with its sealed material (null once retired). */
export interface SealedSecretRecord extends SecretVersionRecord {
  readonly wrappedKey: Uint8Array | null;
  readonly keyNonce: Uint8Array | null;
  readonly nonce: Uint8Array | null;
  readonly ciphertext: Uint8Array | null;
}

/** The storage of sealed secret versions: what `createSecretStore` is built on. */
export interface SecretRows {
  /** Writes the slot's next version; `seal` is given the version the ciphertext is bound to. */
  insertVersion(
    id: string,
    slot: SecretSlot,
    seal: (version: number) => SealedSecretColumns,
  ): Promise<SecretVersionRecord>;
  /** The matching owners' live versions, newest of each kind, ordered by owner then kind. */
  listLive(owners: OwnerMatch): Promise<SecretVersionRecord[]>;
  findLive(slot: SecretSlot): Promise<SecretVersionRecord | undefined>;
  findLiveSealed(slot: SecretSlot): Promise<SealedSecretRecord | undefined>;
  /** Retires every version of the slot and erases its sealed material; how many were live. */
  retire(slot: SecretSlot): Promise<number>;
  /** Retires every live secret of the matching owners, whatever their kind; how many were live. */
  retireOwners(owners: OwnerMatch): Promise<number>;
}

/**
 * Owners of one type picked by their id: exactly, or by a prefix or suffix of a composite id
 * (`<agent id>:` picks an agent's installations and bindings, `:<provider id>` a provider's
 * bindings).
 */
export type OwnerMatch =
  | { readonly ownerType: SecretOwnerType; readonly ownerId: string }
  | { readonly ownerType: SecretOwnerType; readonly ownerIdPrefix: string }
  | { readonly ownerType: SecretOwnerType; readonly ownerIdSuffix: string };

/** The deployment's recorded instance key: its fingerprint, and a rotation's target while one runs. */
export interface InstanceKeyRecord {
  readonly fingerprint: string;
  readonly pendingFingerprint: string | null;
}

/** A live version's wrapped data key, with what it is bound to: what rotation re-wraps. */
export interface WrappedSecretRow extends SecretSlot {
  readonly id: string;
  readonly version: number;
  readonly keyId: string;
  readonly wrappedKey: Uint8Array;
  readonly keyNonce: Uint8Array;
}

/** A data key wrapped under another instance key. */
export interface WrappedDataKey {
  readonly keyId: string;
  readonly wrappedKey: Uint8Array;
  readonly keyNonce: Uint8Array;
}

/** The storage behind instance key checks and rotation (src/store's `instanceKeyRows`). */
export interface InstanceKeyRows {
  /** Records `fingerprint` if none is recorded yet; returns what is recorded. */
  record(fingerprint: string): Promise<InstanceKeyRecord>;
  /** Marks a rotation `from` → `to` pending (again, when resuming); undefined when `from` is not recorded or another rotation is pending. */
  beginRotation(from: string, to: string): Promise<InstanceKeyRecord | undefined>;
  /** Re-wraps up to `limit` live versions still under `from`, in one transaction; how many. */
  rewrapBatch(
    from: string,
    limit: number,
    rewrap: (row: WrappedSecretRow) => WrappedDataKey,
  ): Promise<number>;
  /** Records `to` as the key once no live version is under `from`; false if some still are. */
  finishRotation(from: string, to: string): Promise<boolean>;
}
