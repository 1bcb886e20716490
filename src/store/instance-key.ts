import type {
  InstanceKeyRecord,
  InstanceKeyRows,
  WrappedDataKey,
  WrappedSecretRow,
} from '../secrets/secret-records.ts';
import type { Db } from './db.ts';

const RECORD = `fingerprint, pending_fingerprint as "pendingFingerprint"`;

/** The instance key rows over a database: the recorded fingerprint and the re-wrapping of keys. */
export function instanceKeyRows(db: Db): InstanceKeyRows {
  return {
    async record(fingerprint) {
      await db.query(
        'insert into instance_key (fingerprint) values ($1) on conflict (singleton) do nothing',
        [fingerprint],
      );
      const { rows } = await db.query<InstanceKeyRecord>(`select ${RECORD} from instance_key`);
      return rows[0] as InstanceKeyRecord;
    },

    async beginRotation(from, to) {
      const { rows } = await db.query<InstanceKeyRecord>(
        `update instance_key set pending_fingerprint = $2,
           rotation_started_at = coalesce(rotation_started_at, now())
          where fingerprint = $1 and (pending_fingerprint is null or pending_fingerprint = $2)
          returning ${RECORD}`,
        [from, to],
      );
      return rows[0];
    },

    rewrapBatch(from, limit, rewrap) {
      return db.transaction(async (tx) => {
        const { rows } = await tx.query<WrappedSecretRow>(
          `select id, owner_type as "ownerType", owner_id as "ownerId", kind, version,
             key_id as "keyId", wrapped_key as "wrappedKey", key_nonce as "keyNonce"
             from secrets where key_id = $1 and wrapped_key is not null
            order by id limit $2 for update skip locked`,
          [from, limit],
        );
        for (const row of rows) {
          const next: WrappedDataKey = rewrap(row);
          await tx.query(
            `update secrets set key_id = $3, wrapped_key = $4, key_nonce = $5
              where id = $1 and key_id = $2`,
            [row.id, from, next.keyId, next.wrappedKey, next.keyNonce],
          );
        }
        return rows.length;
      });
    },

    finishRotation(from, to) {
      return db.transaction(async (tx) => {
        await tx.query('select 1 from instance_key for update');
        const { rows } = await tx.query<{ left: number }>(
          `select count(*)::int as left from secrets where key_id = $1 and wrapped_key is not null`,
          [from],
        );
        if ((rows[0]?.left ?? 0) > 0) return false;
        const { rowCount } = await tx.query(
          `update instance_key set fingerprint = $2, pending_fingerprint = null,
             rotation_started_at = null
            where fingerprint = $1 and pending_fingerprint = $2`,
          [from, to],
        );
        return rowCount === 1;
      });
    },
  };
}
