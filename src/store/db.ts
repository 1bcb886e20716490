import { hasCode, MeshError } from '../tool/errors.ts';

/** A result set: rows typed by the caller, who knows the SQL it wrote. */
export interface QueryResult<R> {
  readonly rows: R[];
  readonly rowCount: number;
}

/** Something that runs parameterized SQL: the database, or one transaction on it. */
export interface Queryable {
  query<R = Record<string, unknown>>(
    sql: string,
    params?: readonly unknown[],
  ): Promise<QueryResult<R>>;
  /** Runs a script of several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

/**
 * The one seam between Mesh and PostgreSQL. PGlite (embedded) and node-postgres (a server) both
 * implement it; only src/store knows which one is behind it.
 */
/** A connection pool's state: its connections, those idle, and queries waiting for one. */
export interface PoolStats {
  readonly total: number;
  readonly idle: number;
  readonly waiting: number;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Where the statements that keep a run's lease go (renewing and releasing it): a lane of its
   * own on a server, so a heartbeat never waits behind the turns it keeps alive — under hundreds
   * of concurrent turns a renewal queued in the main pool outlived the lease. Absent where there
   * is one connection anyway (the embedded database): the Db itself.
   */
  readonly leases?: Queryable;
  /**
   * Where independent reads issued together go together: the statements given to it in one turn
   * of the event loop share one round trip (a server's pipeline mode), for reads that take no
   * locks, such as a turn's configuration. Absent on the embedded database, where a statement
   * costs no round trip: the Db itself.
   */
  readonly reads?: Queryable;
  /** The connection pool's state now, where there is one (a server; not the embedded database). */
  readonly poolStats?: () => PoolStats;
  /**
   * Listens on a notification channel (LISTEN, on a connection of its own), calling `onPayload`
   * with each payload; `onLost` when the connection drops (notifications may then be missed).
   * Resolves with the way to stop. Absent where one process holds the database (embedded).
   */
  readonly listen?: (
    channel: string,
    onPayload: (payload: string) => void,
    onLost: () => void,
  ) => Promise<() => Promise<void>>;
  /** Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * A Db over an open transaction: its queries run in that transaction, and its own `transaction`
 * joins it (no nesting), so code written against a Db can take part in a caller's unit of work.
 */
export function joinTransaction(tx: Queryable, kind: Db['kind']): Db {
  return {
    kind,
    query: (sql, params) => tx.query(sql, params),
    exec: (sql) => tx.exec(sql),
    transaction: (fn) => fn(tx),
    close: () =>
      Promise.reject(new MeshError('store_misuse', 'a joined transaction is closed by its owner')),
  };
}

/** A storage failure with a stable code; messages never carry a password. */
export class StoreError extends MeshError {}

/** Whether a failed statement broke a unique constraint (a name that is already taken). */
export function isUniqueViolation(error: unknown): boolean {
  return hasCode(error, 'database_error') && error.data?.['sqlstate'] === '23505';
}

/** A connection string's host, port and database, with the credentials left out. */
export function describeDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const db = parsed.pathname.replace(/^\//, '') || '(default database)';
    return `${parsed.hostname}:${parsed.port || '5432'}/${db}`;
  } catch {
    return '(an unparsable DATABASE_URL)';
  }
}

/** Removes a URL's password (and the URL itself) from a driver's message before it is shown. */
export function redact(message: string, url: string | undefined): string {
  if (!url) return message;
  let out = message.replaceAll(url, describeDatabaseUrl(url));
  try {
    const { password } = new URL(url);
    if (password) {
      out = out.replaceAll(password, '***').replaceAll(decodeURIComponent(password), '***');
    }
  } catch {
    // An unparsable URL has no password we can find; the whole URL was removed above.
  }
  return out;
}
