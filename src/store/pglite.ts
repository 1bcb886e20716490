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
 * How large a buffer pool the embedded database starts with. PGlite allocates and zeroes
 * PostgreSQL's shared buffers in its WebAssembly heap at every start, which for the default
 * 128 MB is about 0.4 s of CPU; a page that misses the pool is read from the OS page cache (a
 * data directory) or from the same heap (memory). `small` suits a process that does one piece of
 * work and exits, and a database in memory; `standard` keeps PostgreSQL's default for a server.
 */
export type BufferPool = 'small' | 'standard';

const SMALL_BUFFER_POOL = ['-c', 'shared_buffers=16MB'];

/**
 * Opens the embedded database: a data directory on disk, or memory when `dataDir` is undefined.
 * `loadDataDir` starts from a dump (tests use a migrated template to skip initdb). The buffer
 * pool is small in memory and standard on disk unless `bufferPool` says otherwise.
 */
export async function openPglite(
  options: {
    dataDir?: string;
    loadDataDir?: Blob;
    bufferPool?: BufferPool;
    onClose?: () => void;
  } = {},
): Promise<PgliteDb> {
  const pool = options.bufferPool ?? (options.dataDir === undefined ? 'small' : 'standard');
  const db = await PGlite.create({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir }),
    ...(pool === 'small'
      ? { startParams: [...PGlite.defaultStartParams, ...SMALL_BUFFER_POOL] }
      : {}),
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
