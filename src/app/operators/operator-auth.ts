import { userInfo } from 'node:os';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../../store/db.ts';
import {
  deleteOperatorSession,
  findOperatorSession,
  insertFirstOperatorToken,
  insertOperatorSession,
  insertOperatorToken,
  listOperatorTokens as listOperatorTokenRows,
  revokeOperatorToken as revokeOperatorTokenRow,
  useOperatorToken,
  type OperatorSessionRecord,
  type OperatorTokenRecord,
  type TokenKind,
} from '../../store/operator-auth.ts';

/** Operator tokens start with this, so a leaked one is recognisable by secret scanners. */
export const OPERATOR_TOKEN_PREFIX = 'mesh_op_';
const TOKEN_SHAPE = /^mesh_op_[A-Za-z0-9_-]{43}$/;
const SESSION_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** How long a UI session lasts after login. */
export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/** Serialises the first-token check across replicas sharing one database. */
const FIRST_TOKEN_LOCK = 0x6d657368_01;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function newToken(): string {
  return OPERATOR_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

/** A freshly minted token: the only time its value exists outside the operator's hands. */
export interface MintedToken {
  readonly token: string;
  readonly record: OperatorTokenRecord;
}

/** Creates an operator token; the value is returned once and only its hash is stored. */
export async function createOperatorToken(
  db: Db,
  label: string,
  kind: TokenKind = 'operator',
): Promise<MintedToken> {
  const token = newToken();
  const record = await insertOperatorToken(db, {
    id: randomUUID(),
    label,
    sha256: sha256(token),
    kind,
  });
  return { token, record };
}

/** Every operator token with its label and dates; never a token (only hashes are kept). */
export function listOperatorTokens(db: Db): Promise<OperatorTokenRecord[]> {
  return listOperatorTokenRows(db);
}

/** Revokes a live token and ends the UI sessions it opened; false when none is live. */
export function revokeOperatorToken(db: Db, id: string): Promise<boolean> {
  return revokeOperatorTokenRow(db, id);
}

/**
 * The name the first token carries, which labels what it does (messages, grants): the operator
 * named in MESH_OPERATOR_NAME, else the account that started Mesh, else `admin`.
 */
export function firstOperatorName(): string {
  const named = process.env['MESH_OPERATOR_NAME']?.trim();
  if (named) return named.slice(0, 100);
  try {
    const user = userInfo().username.trim();
    if (/^[\w.@-]{1,100}$/.test(user)) return user;
  } catch {
    // No account to name (a container without a passwd entry).
  }
  return 'admin';
}

/**
 * On first start there is no operator token: create one so the operator can log in. Returns it
 * (to be printed once) only when this call created it; replicas starting together create one.
 */
export async function ensureFirstOperatorToken(db: Db): Promise<MintedToken | undefined> {
  const token = newToken();
  const record = await db.transaction(async (tx) => {
    await tx.query('select pg_advisory_xact_lock($1)', [FIRST_TOKEN_LOCK]);
    return insertFirstOperatorToken(tx, {
      id: randomUUID(),
      label: firstOperatorName(),
      sha256: sha256(token),
    });
  });
  return record ? { token, record } : undefined;
}

/** The live token a presented value names, or undefined. Malformed values never reach SQL. */
export async function verifyOperatorToken(
  db: Db,
  presented: string,
): Promise<OperatorTokenRecord | undefined> {
  if (!TOKEN_SHAPE.test(presented)) return undefined;
  return useOperatorToken(db, sha256(presented));
}

/** A new UI session: the cookie value and the CSRF token its forms must echo. */
export interface OpenedSession {
  readonly sessionId: string;
  readonly csrfToken: string;
}

export async function openOperatorSession(db: Db, tokenId: string): Promise<OpenedSession> {
  const sessionId = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(32).toString('base64url');
  await insertOperatorSession(db, {
    idSha256: sha256(sessionId),
    tokenId,
    csrfToken,
    ttlMs: SESSION_TTL_MS,
  });
  return { sessionId, csrfToken };
}

export async function findSession(
  db: Db,
  sessionId: string,
): Promise<OperatorSessionRecord | undefined> {
  if (!SESSION_SHAPE.test(sessionId)) return undefined;
  return findOperatorSession(db, sha256(sessionId));
}

/** Ends a session (and sweeps expired ones). */
export async function closeOperatorSession(db: Db, sessionId: string): Promise<void> {
  await deleteOperatorSession(db, sha256(sessionId));
}
