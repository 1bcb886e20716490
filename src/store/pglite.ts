import { PGlite, type Transaction } from '@electric-sql/pglite';
import { isMeshError } from '../tool/errors.ts';
import { StoreError, type Db, type Queryable, type QueryResult } from './db.ts';

/** The embedded database, which can also dump its files to start other instances from. */
export interface PgliteDb extends Db {
  dump(): Promise<Blob>;
}

function wrap(error: unknown): StoreError {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  return new StoreError('database_error', message, code ? { sqlstate: code } : undefined, {
    cause: error,
  });
}

function adapt(target: PGlite | Transaction): Queryable {
  return {
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      try {
        const result = await target.query<R>(sql, params as unknown[] | undefined);
        return { rows: result.rows, rowCount: result.affectedRows ?? result.rows.length };
      } catch (error) {
        throw wrap(error);
      }
    },
    async exec(sql: string): Promise<void> {
      try {
        await target.exec(sql);
      } catch (error) {
        throw wrap(error);
      }
    },
  };
}

/**
 * Opens the embedded database: a data directory on disk, or memory when `dataDir` is undefined.
 * `loadDataDir` starts from a dump (tests use a migrated template to skip initdb).
 */
export async function openPglite(
  options: { dataDir?: string; loadDataDir?: Blob; onClose?: () => void } = {},
): Promise<PgliteDb> {
  const db = await PGlite.create({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir }),
  });
  const direct = adapt(db);
  return {
    kind: 'pglite',
    query: (sql, params) => direct.query(sql, params),
    exec: (sql) => direct.exec(sql),
    async transaction(fn) {
      try {
        return await db.transaction((tx) => fn(adapt(tx)));
      } catch (error) {
        throw isMeshError(error) ? error : wrap(error);
      }
    },
    dump: () => db.dumpDataDir('none'),
    async close() {
      await db.close();
      options.onClose?.();
    },
  };
}
