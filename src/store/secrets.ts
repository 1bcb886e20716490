import type {
  OwnerMatch,
  SealedSecretColumns,
  SealedSecretRecord,
  SecretRows,
  SecretSlot,
  SecretVersionRecord,
} from '../secrets/secret-records.ts';
import type { Db, Queryable } from './db.ts';

const METADATA = `id, owner_type as "ownerType", owner_id as "ownerId", kind, version,
  key_id as "keyId", created_at as "createdAt", retired_at as "retiredAt"`;
const SEALED = `${METADATA}, wrapped_key as "wrappedKey", key_nonce as "keyNonce", nonce, ciphertext`;

/** Advisory-lock class of secret slots (the two-key form, apart from one-key locks elsewhere). */
const SLOT_LOCK_CLASS = 0x5ec2e7;

/**
 * Writes the next version of a slot (1, 2, 3…). The slot is locked for the transaction, so
 * concurrent writers get distinct versions; `seal` is given the version because the ciphertext is
 * bound to it.
 */
export async function insertSecretVersion(
  db: Db,
  id: string,
  slot: SecretSlot,
  seal: (version: number) => SealedSecretColumns,
): Promise<SecretVersionRecord> {
  return db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1::int, hashtext($2::text))', [
      SLOT_LOCK_CLASS,
      `${slot.ownerType}/${slot.ownerId}/${slot.kind}`,
    ]);
    const { rows: next } = await tx.query<{ version: number }>(
      `select coalesce(max(version), 0)::int + 1 as version from secrets
        where owner_type = $1 and owner_id = $2 and kind = $3`,
      [slot.ownerType, slot.ownerId, slot.kind],
    );
    const version = next[0]?.version ?? 1;
    const sealed = seal(version);
    const { rows } = await tx.query<SecretVersionRecord>(
      `insert into secrets (id, owner_type, owner_id, kind, version, key_id, wrapped_key, key_nonce,
         nonce, ciphertext)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) returning ${METADATA}`,
      [
        id,
        slot.ownerType,
        slot.ownerId,
        slot.kind,
        version,
        sealed.keyId,
        sealed.wrappedKey,
        sealed.keyNonce,
        sealed.nonce,
        sealed.ciphertext,
      ],
    );
    return rows[0] as SecretVersionRecord;
  });
}

/**
 * The newest live version of each kind the matching owners hold, without sealed material, by
 * owner then kind: one owner, or every installation of an agent in one read.
 */
export async function listLiveSecrets(
  q: Queryable,
  owners: OwnerMatch,
): Promise<SecretVersionRecord[]> {
  const [test, id] = ownerTest(owners);
  const { rows } = await q.query<SecretVersionRecord>(
    `select distinct on (owner_id, kind) ${METADATA} from secrets
      where owner_type = $1 and ${test} and retired_at is null
      order by owner_id, kind, version desc`,
    [owners.ownerType, id],
  );
  return rows;
}

/** The test of `owner_id` against $2 that picks the matching owners, and $2. */
function ownerTest(owners: OwnerMatch): [string, string] {
  return 'ownerId' in owners
    ? ['owner_id = $2', owners.ownerId]
    : 'ownerIdPrefix' in owners
      ? ['left(owner_id, length($2)) = $2', owners.ownerIdPrefix]
      : ['right(owner_id, length($2)) = $2', owners.ownerIdSuffix];
}

/** The newest live version of a slot, without sealed material. */
export async function findLiveSecret(
  q: Queryable,
  slot: SecretSlot,
): Promise<SecretVersionRecord | undefined> {
  const { rows } = await q.query<SecretVersionRecord>(
    `select ${METADATA} from secrets
      where owner_type = $1 and owner_id = $2 and kind = $3 and retired_at is null
      order by version desc limit 1`,
    [slot.ownerType, slot.ownerId, slot.kind],
  );
  return rows[0];
}

/** The newest live version of a slot with its sealed material, for decryption. */
export async function findLiveSealedSecret(
  q: Queryable,
  slot: SecretSlot,
): Promise<SealedSecretRecord | undefined> {
  const { rows } = await q.query<SealedSecretRecord>(
    `select ${SEALED} from secrets
      where owner_type = $1 and owner_id = $2 and kind = $3 and retired_at is null
      order by version desc limit 1`,
    [slot.ownerType, slot.ownerId, slot.kind],
  );
  return rows[0];
}

/**
 * Retires every live version of a slot and erases its sealed material: a revoked credential is
 * not kept recoverable. Returns how many versions were retired.
 */
export async function retireSecretVersions(q: Queryable, slot: SecretSlot): Promise<number> {
  const { rowCount } = await q.query(
    `update secrets set retired_at = now(), wrapped_key = null, key_nonce = null, nonce = null,
       ciphertext = null
      where owner_type = $1 and owner_id = $2 and kind = $3 and retired_at is null`,
    [slot.ownerType, slot.ownerId, slot.kind],
  );
  return rowCount;
}

/** Retires every live secret of the matching owners (see {@link OwnerMatch}). */
export async function retireOwnerSecrets(q: Queryable, owners: OwnerMatch): Promise<number> {
  const [test, id] = ownerTest(owners);
  const { rowCount } = await q.query(
    `update secrets set retired_at = now(), wrapped_key = null, key_nonce = null, nonce = null,
       ciphertext = null
      where owner_type = $1 and ${test} and retired_at is null`,
    [owners.ownerType, id],
  );
  return rowCount;
}

/** The secrets layer's {@link SecretRows}, on a database. */
export function secretRows(db: Db): SecretRows {
  return {
    insertVersion: (id, slot, seal) => insertSecretVersion(db, id, slot, seal),
    listLive: (owner) => listLiveSecrets(db, owner),
    findLive: (slot) => findLiveSecret(db, slot),
    findLiveSealed: (slot) => findLiveSealedSecret(db, slot),
    retire: (slot) => retireSecretVersions(db, slot),
    retireOwners: (owners) => retireOwnerSecrets(db, owners),
  };
}
