import type { Queryable } from './db.ts';

/** An operator token as stored: never the token, only its hash. */
export interface OperatorTokenRecord {
  readonly id: string;
  readonly label: string;
  /** `operator` acts as its holder; `relay` may also post for a channel's people (by name). */
  readonly kind: TokenKind;
  readonly createdAt: Date;
  readonly lastUsedAt: Date | null;
  readonly revokedAt: Date | null;
}

/** What a token may do: act as its holder, or also relay for a channel's people. */
export type TokenKind = 'operator' | 'relay';

const TOKEN_COLUMNS = `id, label, kind, created_at as "createdAt", last_used_at as "lastUsedAt",
  revoked_at as "revokedAt"`;

export async function insertOperatorToken(
  q: Queryable,
  token: { id: string; label: string; sha256: string; kind?: TokenKind },
): Promise<OperatorTokenRecord> {
  const { rows } = await q.query<OperatorTokenRecord>(
    `insert into operator_tokens (id, label, token_sha256, kind) values ($1, $2, $3, $4)
     returning ${TOKEN_COLUMNS}`,
    [token.id, token.label, token.sha256, token.kind ?? 'operator'],
  );
  return rows[0] as OperatorTokenRecord;
}

/** Inserts the first token only when there is none yet (one statement: safe across replicas). */
export async function insertFirstOperatorToken(
  q: Queryable,
  token: { id: string; label: string; sha256: string },
): Promise<OperatorTokenRecord | undefined> {
  const { rows } = await q.query<OperatorTokenRecord>(
    `insert into operator_tokens (id, label, token_sha256)
     select $1, $2, $3 where not exists (select 1 from operator_tokens)
     returning ${TOKEN_COLUMNS}`,
    [token.id, token.label, token.sha256],
  );
  return rows[0];
}

/** The live token with this hash; its last use is recorded at most once a minute. */
export async function useOperatorToken(
  q: Queryable,
  sha256: string,
): Promise<OperatorTokenRecord | undefined> {
  const { rows } = await q.query<OperatorTokenRecord>(
    `with t as (
       select ${TOKEN_COLUMNS} from operator_tokens where token_sha256 = $1 and revoked_at is null
     ), touched as (
       update operator_tokens set last_used_at = now()
       where id in (select id from t)
         and (last_used_at is null or last_used_at < now() - interval '1 minute')
     )
     select * from t`,
    [sha256],
  );
  return rows[0];
}

export async function listOperatorTokens(q: Queryable): Promise<OperatorTokenRecord[]> {
  const { rows } = await q.query<OperatorTokenRecord>(
    `select ${TOKEN_COLUMNS} from operator_tokens order by created_at`,
  );
  return rows;
}

/** Revokes a token and ends every session it opened. */
export async function revokeOperatorToken(q: Queryable, id: string): Promise<boolean> {
  // The rows, not rowCount: the embedded database counts a select's rows as none affected.
  const { rows } = await q.query(
    `with revoked as (
       update operator_tokens set revoked_at = now() where id = $1 and revoked_at is null returning id
     ), ended as (
       delete from operator_sessions where token_id in (select id from revoked)
     )
     select id from revoked`,
    [id],
  );
  return rows.length > 0;
}

/** A UI session as the server needs it. */
export interface OperatorSessionRecord {
  readonly tokenId: string;
  readonly tokenLabel: string;
  readonly csrfToken: string;
  readonly expiresAt: Date;
}

export async function insertOperatorSession(
  q: Queryable,
  session: { idSha256: string; tokenId: string; csrfToken: string; ttlMs: number },
): Promise<void> {
  await q.query(
    `insert into operator_sessions (id_sha256, token_id, csrf_token, expires_at)
     values ($1, $2, $3, now() + make_interval(secs => $4::double precision / 1000))`,
    [session.idSha256, session.tokenId, session.csrfToken, session.ttlMs],
  );
}

/** A live session whose token is still live. */
export async function findOperatorSession(
  q: Queryable,
  idSha256: string,
): Promise<OperatorSessionRecord | undefined> {
  const { rows } = await q.query<OperatorSessionRecord>(
    `select s.token_id as "tokenId", t.label as "tokenLabel", s.csrf_token as "csrfToken", s.expires_at as "expiresAt"
     from operator_sessions s join operator_tokens t on t.id = s.token_id
     where s.id_sha256 = $1 and s.expires_at > now() and t.revoked_at is null`,
    [idSha256],
  );
  return rows[0];
}

export async function deleteOperatorSession(q: Queryable, idSha256: string): Promise<void> {
  await q.query(`delete from operator_sessions where id_sha256 = $1 or expires_at <= now()`, [
    idSha256,
  ]);
}
